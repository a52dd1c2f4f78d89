#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver, etcd, kube-controller-manager for the garbage collector of
# `make dev` and the e2e tests, and kubectl for `make dev`) from the Go module proxy into bin/k8s/<version>/,
# because setup-envtest's download bucket is not reachable from our CI.
# A finished binary is reused: each one is moved into place only once it is complete.
# Prints the directory to use as KUBEBUILDER_ASSETS on stdout; progress goes to stderr.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.36.3}
ETCD_VERSION=${ETCD_VERSION:-3.6.8}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${ENVTEST_DIR:-$ROOT/bin/k8s/$K8S_VERSION-etcd$ETCD_VERSION}

if [[ -x $DEST/kube-apiserver && -x $DEST/etcd && -x $DEST/kubectl && -x $DEST/kube-controller-manager ]]; then
	echo "$DEST"
	exit 0
fi

proxy=${GOPROXY:-https://proxy.golang.org}
proxy=${proxy%%,*}
work=$(mktemp -d "${TMPDIR:-/tmp}/rackwire-envtest.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$DEST"

# install moves a finished binary into place atomically, so an interrupted run never leaves a
# half-written binary that a later run would trust.
install_bin() {
	mv "$1" "$DEST/.$2.tmp"
	mv "$DEST/.$2.tmp" "$DEST/$2"
}

# The kubernetes module pins every staging repository at v0.0.0 and relies on replace
# directives that only apply inside its own tree; a consumer repeats them at the matching tag.
k8s_module() {
	[[ -f $work/k8s/go.mod ]] && return
	mkdir -p "$work/k8s"
	(
		cd "$work/k8s"
		go mod init rackwire.local/envtest-k8s >/dev/null 2>&1
		go mod edit -require="k8s.io/kubernetes@v$K8S_VERSION"
		curl -fsSL "$proxy/k8s.io/kubernetes/@v/v$K8S_VERSION.mod" |
			awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' | sort -u |
			while read -r mod; do
				go mod edit -replace="$mod=$mod@v0.${K8S_VERSION#1.}"
			done
		go get "k8s.io/kubernetes/cmd/kube-apiserver@v$K8S_VERSION" "k8s.io/kubernetes/cmd/kubectl@v$K8S_VERSION" \
			"k8s.io/kubernetes/cmd/kube-controller-manager@v$K8S_VERSION" >&2
	)
}

build_etcd() {
	# etcd's server module is its main package; its go.mod has replace directives, so it is
	# built as a dependency of a throwaway module rather than with go install.
	echo "building etcd v$ETCD_VERSION" >&2
	mkdir -p "$work/etcd"
	(
		cd "$work/etcd"
		go mod init rackwire.local/envtest-etcd >/dev/null 2>&1
		go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2
		CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$work/etcd-bin" go.etcd.io/etcd/server/v3
	)
	install_bin "$work/etcd-bin" etcd
}

# etcd shares no code with Kubernetes: it builds beside it, and its download and its link fill
# the gaps of the other build.
etcd_pid=
if [[ ! -x $DEST/etcd ]]; then
	build_etcd &
	etcd_pid=$!
fi

# kubectl is not needed by the tests, but `make dev` tells the user to run it and a fresh
# machine has none. kube-controller-manager runs the garbage collector (owner references) and the
# namespace controller for `make dev` and test/e2e; the envtest-only suites do not start it.
# One go build for all three: their links overlap the compiles instead of queueing after
# them. No symbol tables or DWARF (-s -w): nobody debugs these here, and they link faster.
need=()
for bin in kube-apiserver kubectl kube-controller-manager; do
	[[ -x $DEST/$bin ]] || need+=("$bin")
done
if ((${#need[@]} > 0)); then
	echo "building ${need[*]} v$K8S_VERSION (about six minutes on two cores with a cold cache)" >&2
	k8s_module
	pkgs=()
	for bin in "${need[@]}"; do
		pkgs+=("k8s.io/kubernetes/cmd/$bin")
	done
	mkdir -p "$work/out"
	(cd "$work/k8s" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$work/out/" "${pkgs[@]}")
	for bin in "${need[@]}"; do
		install_bin "$work/out/$bin" "$bin"
	done
fi

if [[ -n $etcd_pid ]]; then
	wait "$etcd_pid"
fi

echo "$DEST"
