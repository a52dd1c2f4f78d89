#!/usr/bin/env bash
# Installs the Debian packages that `make test` needs and a fresh machine may lack. Go itself
# is expected at /usr/local/go or on PATH; Go tools come from the module proxy via the
# Makefile. Packages already present are not reinstalled, so this is cheap on a warm machine.
set -euo pipefail

packages=(ca-certificates curl git make gcc)
# The switch e2e tests: Ansible with the network-runner role drives Open vSwitch over SSH.
packages+=(ansible python3-network-runner openvswitch-switch openssh-server sshpass python3-paramiko)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	exit 0
fi
echo "installing ${missing[*]}" >&2
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
