#!/usr/bin/env bash
# Builds the Bare Metal Operator manager (github.com/metal3-io/baremetal-operator, run in its
# -test-mode by the host-link tests) into bin/bmo/<version>/ and prints the binary's path; progress
# goes to stderr. A finished binary is reused. Its CRDs come from the same module (config/base/crds/bases),
# found in the module cache through `go list -m -json` in the throwaway module; their directory is
# printed on the second line.
set -euo pipefail

BMO_VERSION=${BMO_VERSION:-0.13.2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${BMO_DIR:-$ROOT/bin/bmo/$BMO_VERSION}
mkdir -p "$DEST"

if [[ ! -x $DEST/manager || ! -d $DEST/crds ]]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/rackwire-bmo.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	echo "building baremetal-operator v$BMO_VERSION (a cold cache takes a few minutes)" >&2
	(
		cd "$work"
		go mod init rackwire.local/bmo >/dev/null 2>&1
		# The module's main package sits at its root and its go.mod replaces its apis and hardwareutils
		# with local directories, which only apply inside its own tree: require them at their tags instead.
		go mod edit \
			-require="github.com/metal3-io/baremetal-operator@v$BMO_VERSION" \
			-require="github.com/metal3-io/baremetal-operator/apis@v$BMO_VERSION" \
			-require="github.com/metal3-io/baremetal-operator/pkg/hardwareutils@v0.5.1" \
			-require="github.com/metal3-io/ironic-standalone-operator/api@v0.10.0"
		cat >tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/metal3-io/baremetal-operator"
GO
		go mod tidy >&2
		CGO_ENABLED=0 go build -trimpath -o "$work/manager" github.com/metal3-io/baremetal-operator
		dir=$(go list -m -f '{{.Dir}}' "github.com/metal3-io/baremetal-operator")
		rm -rf "$DEST/.crds.tmp" && mkdir -p "$DEST/.crds.tmp"
		cp "$dir"/config/base/crds/bases/*.yaml "$DEST/.crds.tmp/"
		chmod -R u+w "$DEST/.crds.tmp"
	)
	rm -rf "$DEST/crds" && mv "$DEST/.crds.tmp" "$DEST/crds"
	mv "$work/manager" "$DEST/.manager.tmp" && mv "$DEST/.manager.tmp" "$DEST/manager"
fi

echo "$DEST/manager"
echo "$DEST/crds"
