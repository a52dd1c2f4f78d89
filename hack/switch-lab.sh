#!/usr/bin/env bash
# Starts a switch lab on loopback: Open vSwitch (ovsdb-server + ovs-vswitchd, no kernel
# module: a netdev bridge with dummy ports) reached through an sshd on a high port as an
# unprivileged user, exactly as the operator reaches a production switch. The e2e tests and
# the switch benchmark call this; a person can too, to try the Ansible driver by hand.
#
#   hack/switch-lab.sh start DIR [SSH_PORT] [PORTS]   prints KEY=VALUE lines (see below)
#   hack/switch-lab.sh stop DIR
#
# Every file, socket and pid lives under DIR; stop kills what start started. The lab user
# (rackwire-lab) and its password, kept in /etc/rackwire-lab.password, are the only
# changes outside DIR.
set -euo pipefail

LAB_USER=rackwire-lab
BRIDGE=br-lab
PASSWORD_FILE=/etc/rackwire-lab.password

die() { echo "switch-lab: $*" >&2; exit 1; }

stop() {
	local dir=$1
	local p pid pids=()
	# A daemon removes its own pid file as it exits, so every read may find nothing.
	for p in sshd ovs-vswitchd ovsdb-server; do
		pid=$(cat "$dir/$p.pid" 2>/dev/null) || continue
		kill "$pid" 2>/dev/null && pids+=("$pid")
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	done
	rm -f "$dir"/*.pid
}

start() {
	local dir=$1 sshport=${2:-2222} nports=${3:-32}
	"$(dirname "$0")/system-packages.sh"
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	stop "$dir"
	rm -rf "${dir:?}"/{db,*.sock,*.ctl,*.mgmt,*.log,sshd_config,ssh_host_*}

	# Labs may run side by side (test packages run in parallel) and share the user, so its
	# password is made once and kept root-only; a new one would lock the other labs out.
	local password
	password=$(
		{
			flock 9
			id -u "$LAB_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$LAB_USER"
			if [[ ! -s $PASSWORD_FILE ]]; then
				(umask 077 && head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$PASSWORD_FILE")
				echo "$LAB_USER:$(cat "$PASSWORD_FILE")" | chpasswd
			fi
			cat "$PASSWORD_FILE"
		} 9>/run/rackwire-lab.lock
	)
	mkdir -p /run/sshd
	chmod 0755 "$dir"
	chown "$LAB_USER" "$dir"

	# The daemons run as the lab user, so the user the switch's playbooks log in as owns
	# the database and the bridge's OpenFlow socket, as a switch's admin account would.
	local as=(runuser -u "$LAB_USER" --)
	"${as[@]}" ovsdb-tool create "$dir/db" /usr/share/openvswitch/vswitch.ovsschema
	"${as[@]}" env OVS_RUNDIR="$dir" ovsdb-server "$dir/db" --remote="punix:$dir/db.sock" \
		--unixctl="$dir/ovsdb-server.ctl" --pidfile="$dir/ovsdb-server.pid" \
		--log-file="$dir/ovsdb-server.log" --detach
	"${as[@]}" ovs-vsctl --db="unix:$dir/db.sock" --no-wait init
	"${as[@]}" env OVS_RUNDIR="$dir" ovs-vswitchd "unix:$dir/db.sock" --enable-dummy=override \
		--unixctl="$dir/ovs-vswitchd.ctl" --pidfile="$dir/ovs-vswitchd.pid" \
		--log-file="$dir/ovs-vswitchd.log" --detach
	local add=(--may-exist add-br "$BRIDGE" -- set bridge "$BRIDGE" datapath_type=netdev)
	for i in $(seq 0 $((nports - 1))); do
		add+=(-- --may-exist add-port "$BRIDGE" "p$i" -- set Interface "p$i" type=dummy)
	done
	"${as[@]}" env OVS_RUNDIR="$dir" ovs-vsctl --db="unix:$dir/db.sock" --timeout=30 "${add[@]}"

	ssh-keygen -q -t ed25519 -N '' -f "$dir/ssh_host_ed25519_key"
	cat >"$dir/sshd_config" <<-EOF
		ListenAddress 127.0.0.1
		ListenAddress 127.0.0.2
		ListenAddress 127.0.0.3
		ListenAddress 127.0.0.4
		Port $sshport
		HostKey $dir/ssh_host_ed25519_key
		PidFile $dir/sshd.pid
		AllowUsers $LAB_USER
		PasswordAuthentication yes
		KbdInteractiveAuthentication no
		PubkeyAuthentication yes
		AuthorizedKeysFile $dir/authorized_keys
		UsePAM no
		StrictModes no
		SetEnv OVS_RUNDIR=$dir
		LogLevel ERROR
	EOF
	/usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"

	# rackwire allows one AnsibleSwitch per device (address, SSH port, bridge). The lab answers
	# on four loopback addresses, so tests can stand up to four Switches on its one bridge,
	# each with its own ports.
	echo "SSH_HOST=127.0.0.1"
	echo "SSH_HOSTS=127.0.0.1 127.0.0.2 127.0.0.3 127.0.0.4"
	echo "SSH_PORT=$sshport"
	echo "SSH_USER=$LAB_USER"
	echo "SSH_PASSWORD=$password"
	echo "SSH_HOST_KEY=$(cut -d' ' -f1,2 "$dir/ssh_host_ed25519_key.pub")"
	echo "BRIDGE=$BRIDGE"
	echo "OVS_RUNDIR=$dir"
	echo "AUTHORIZED_KEYS=$dir/authorized_keys"
}

case ${1:-} in
start) [[ $# -ge 2 ]] || die "usage: $0 start DIR [SSH_PORT] [PORTS]"; start "$2" "${3:-}" "${4:-}" ;;
stop) [[ $# -eq 2 ]] || die "usage: $0 stop DIR"; stop "$2" ;;
*) die "usage: $0 start|stop DIR" ;;
esac
