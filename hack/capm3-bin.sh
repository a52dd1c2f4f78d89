#!/usr/bin/env bash
# Builds the Cluster API Provider Metal3 manager (github.com/metal3-io/cluster-api-provider-metal3)
# that test/capm3 runs against rackwire, into bin/capm3/<version>/, and prints the binary's path,
# then the directory of the CRDs it reads (CAPM3's own, and Cluster API's core CRDs at the
# version CAPM3 pins); progress goes to stderr. A finished build is reused.
#
# CAPM3 pins its own Cluster API (1.13.x, controller-runtime 0.23), not rackwire's, so it is built
# in a throwaway module of its own. Its v1.13.2 modules are served by the proxy but missing from
# the checksum database: GONOSUMDB covers metal3-io for this build only.
set -euo pipefail

CAPM3_VERSION=${CAPM3_VERSION:-1.13.2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${CAPM3_DIR:-$ROOT/bin/capm3/$CAPM3_VERSION}
mkdir -p "$DEST"

if [[ ! -x $DEST/manager || ! -d $DEST/crds ]]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/rackwire-capm3.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	echo "building cluster-api-provider-metal3 v$CAPM3_VERSION (a cold cache takes a few minutes)" >&2
	(
		cd "$work"
		export GONOSUMDB=github.com/metal3-io GOFLAGS=-mod=mod
		go mod init rackwire.local/capm3 >/dev/null 2>&1
		# The main package sits at the module root and its go.mod replaces its api module with a
		# local directory, which only applies inside its own tree: require it at its tag instead.
		go mod edit \
			-require="github.com/metal3-io/cluster-api-provider-metal3@v$CAPM3_VERSION" \
			-require="github.com/metal3-io/cluster-api-provider-metal3/api@v$CAPM3_VERSION"
		cat >tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/metal3-io/cluster-api-provider-metal3"
GO
		go mod tidy >&2
		CGO_ENABLED=0 go build -trimpath -o "$work/manager" github.com/metal3-io/cluster-api-provider-metal3
		capm3=$(go list -m -f '{{.Dir}}' github.com/metal3-io/cluster-api-provider-metal3)
		capi=$(go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)
		rm -rf "$DEST/.crds.tmp" && mkdir -p "$DEST/.crds.tmp"
		cp "$capm3"/config/crd/bases/*.yaml "$DEST/.crds.tmp/"
		cp "$capi"/config/crd/bases/cluster.x-k8s.io_*.yaml "$DEST/.crds.tmp/"
		chmod -R u+w "$DEST/.crds.tmp"
	)
	rm -rf "$DEST/crds" && mv "$DEST/.crds.tmp" "$DEST/crds"
	mv "$work/manager" "$DEST/.manager.tmp" && mv "$DEST/.manager.tmp" "$DEST/manager"
fi

echo "$DEST/manager"
echo "$DEST/crds"
