#!/usr/bin/env bash
# Builds Metal3's ip-address-manager manager (github.com/metal3-io/ip-address-manager), the
# peer test/bench measures rackwire against, into bin/ipam-manager/<version>/, and prints the
# binary's path, then the directory of the CRDs it reads (its own, and Cluster API's Cluster and
# IPAM CRDs at the version it pins, since it watches Clusters and IPAddressClaims); progress goes
# to stderr. A finished build is reused.
#
# It pins its own Cluster API and controller-runtime, not rackwire's, so it is built in a
# throwaway module of its own. Its modules are served by the proxy but missing from the
# checksum database: GONOSUMDB covers metal3-io for this build only.
set -euo pipefail

IPAM_VERSION=${IPAM_VERSION:-1.13.2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${IPAM_MANAGER_DIR:-$ROOT/bin/ipam-manager/$IPAM_VERSION}
mkdir -p "$DEST"

if [[ ! -x $DEST/manager || ! -d $DEST/crds ]]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/rackwire-ipam.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	echo "building ip-address-manager v$IPAM_VERSION (a cold cache takes a few minutes)" >&2
	(
		cd "$work"
		export GONOSUMDB=github.com/metal3-io GOFLAGS=-mod=mod
		go mod init rackwire.local/ipam >/dev/null 2>&1
		# The main package sits at the module root and its go.mod replaces its api module with a
		# local directory, which only applies inside its own tree: require it at its tag instead.
		go mod edit \
			-require="github.com/metal3-io/ip-address-manager@v$IPAM_VERSION" \
			-require="github.com/metal3-io/ip-address-manager/api@v$IPAM_VERSION"
		cat >tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/metal3-io/ip-address-manager"
GO
		go mod tidy >&2
		CGO_ENABLED=0 go build -trimpath -o "$work/manager" github.com/metal3-io/ip-address-manager
		ipam=$(go list -m -f '{{.Dir}}' github.com/metal3-io/ip-address-manager)
		rm -rf "$DEST/.crds.tmp" && mkdir -p "$DEST/.crds.tmp"
		capi=$(go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)
		cp "$ipam"/config/crd/bases/*.yaml "$DEST/.crds.tmp/"
		cp "$capi"/config/crd/bases/cluster.x-k8s.io_clusters.yaml "$capi"/config/crd/bases/ipam.cluster.x-k8s.io_*.yaml "$DEST/.crds.tmp/"
		chmod -R u+w "$DEST/.crds.tmp"
	)
	rm -rf "$DEST/crds" && mv "$DEST/.crds.tmp" "$DEST/crds"
	mv "$work/manager" "$DEST/.manager.tmp" && mv "$DEST/.manager.tmp" "$DEST/manager"
fi

echo "$DEST/manager"
echo "$DEST/crds"
