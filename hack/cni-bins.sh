#!/usr/bin/env bash
# Builds the real CNI clients the node-slice tests and benchmark drive, from the Go module proxy,
# into bin/cni/<versions>/: the whereabouts IPAM plugin, whereabouts' node-slice controller and
# its ip-control-loop (the reconciler the mixed-network and churn tests run beside rackwire)
# (github.com/k8snetworkplumbingwg/whereabouts), cnitool (containernetworking/cni) and the
# reference bridge plugin (containernetworking/plugins).
# whereabouts' go.mod has a replace directive, so `go install` refuses its main packages: they
# are built as dependencies of a throwaway module that repeats the replace.
# A finished binary is reused: each one is moved into place only once it is complete.
# Prints the directory on stdout; progress goes to stderr.
set -euo pipefail

WHEREABOUTS_VERSION=${WHEREABOUTS_VERSION:-v0.9.4}
CNI_VERSION=${CNI_VERSION:-v1.3.0}
PLUGINS_VERSION=${PLUGINS_VERSION:-v1.9.1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${CNI_BIN_DIR:-$ROOT/bin/cni/whereabouts-$WHEREABOUTS_VERSION-cni-$CNI_VERSION-plugins-$PLUGINS_VERSION}

if [[ -x $DEST/whereabouts && -x $DEST/nodeslicecontroller && -x $DEST/ip-control-loop &&
	-x $DEST/cnitool && -x $DEST/bridge ]]; then
	echo "$DEST"
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rackwire-cni.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$DEST"

install_bin() {
	mv "$1" "$DEST/.$2.tmp"
	mv "$DEST/.$2.tmp" "$DEST/$2"
}

# build <name> <version> <package> [replace...]: one throwaway module per tool, so that the
# tools' dependency graphs never meet.
build() {
	local name=$1 version=$2 pkg=$3
	shift 3
	[[ -x $DEST/$name ]] && return
	echo "building $name $version" >&2
	mkdir -p "$work/$name"
	(
		cd "$work/$name"
		go mod init "rackwire.local/cni-$name" >/dev/null 2>&1
		for r in "$@"; do
			go mod edit -replace="$r"
		done
		go get "$pkg@$version" >&2
		CGO_ENABLED=0 go build -trimpath -o "$work/$name.bin" "$pkg"
	)
	install_bin "$work/$name.bin" "$name"
}

# whereabouts' own replace directive, repeated.
wb_replace=github.com/gogo/protobuf=github.com/gogo/protobuf@v1.3.2
build whereabouts "$WHEREABOUTS_VERSION" \
	github.com/k8snetworkplumbingwg/whereabouts/cmd "$wb_replace"
build nodeslicecontroller "$WHEREABOUTS_VERSION" \
	github.com/k8snetworkplumbingwg/whereabouts/cmd/nodeslicecontroller "$wb_replace"
build ip-control-loop "$WHEREABOUTS_VERSION" \
	github.com/k8snetworkplumbingwg/whereabouts/cmd/controlloop "$wb_replace"
build cnitool "$CNI_VERSION" github.com/containernetworking/cni/cnitool
build bridge "$PLUGINS_VERSION" \
	github.com/containernetworking/plugins/plugins/main/bridge

echo "$DEST"
