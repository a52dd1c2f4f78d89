/*
Copyright 2026 The rackwire Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package ansible

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Open vSwitch takes a whole run as one command on the switch: a run costs the same few
// Ansible tasks whatever its number of ports, where the role's include chains cost about
// twenty tasks per port.
//
// The script does what the per-port playbooks do, for every port at once: one ovs-vsctl
// transaction sets the VLANs and the record of every port that exists, one ovs-ofctl
// bundle swaps the access rules, and the admin state is touched only where it changes. A
// missing port fails alone (the bridge's ports are listed first); a transaction or bundle
// that the switch refuses is split into one per port, so the refusal lands on its port. It
// prints the per-port report as JSON.

// batchOS are the OSes whose runs are rendered as one script.
var batchOS = map[string]func(bridge string, ports []portVars) string{
	"openvswitch": ovsApplyScript,
}

// shq quotes a word for POSIX sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func shWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shq(w)
	}
	return strings.Join(q, " ")
}

// ovsPortArgs is the ovs-vsctl transaction of one port: its VLAN settings and its record,
// mirroring providers/openvswitch/conf_{access,trunk}_port.yaml and record_port.yaml.
func ovsPortArgs(v portVars) []string {
	p := v.Port
	var a []string
	switch {
	case v.Mode == "access":
		a = []string{"--", "set", "Port", p, "tag=" + strconv.Itoa(*v.Untagged), "vlan_mode=access", "--", "clear", "Port", p, "trunks"}
	case v.Untagged != nil:
		a = []string{"--", "set", "Port", p, "trunks=" + joinInts(v.Trunked), "tag=" + strconv.Itoa(*v.Untagged), "vlan_mode=native-untagged"}
	default:
		a = []string{"--", "set", "Port", p, "trunks=" + joinInts(v.Trunked), "vlan_mode=trunk", "--", "clear", "Port", p, "tag"}
	}
	if v.Record != nil {
		a = append(a, "--", "set", "Port", p, "external_ids:rackwire-config="+*v.Record)
	}
	return a
}

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// ovsFlowLines are one port's bundle lines: delete its rules, add the new ones.
func ovsFlowLines(v portVars) []string {
	lines := []string{"delete cookie=" + v.ACL.Cookie + "/-1,in_port=" + v.Port}
	for _, f := range v.ACL.Flows {
		lines = append(lines, "add "+f)
	}
	return lines
}

func ovsApplyScript(bridge string, ports []portVars) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("set -u")
	w("br=%s", shq(bridge))
	w(`present=$(ovs-vsctl --timeout=30 list-ports "$br" 2>&1) || { printf 'listing the ports of bridge %%s failed: %%s\n' "$br" "$present" >&2; exit 3; }`)
	// Lookups are shell pattern matches, not a grep per port: a process per port and check
	// was most of a large run's time.
	w(`nl='`)
	w(`'`)
	w(`has() { case "$nl$present$nl" in *"$nl$1$nl"*) return 0;; esac; return 1; }`)
	w(`report=''`)
	w(`failed=' '`)
	w(`failed() { case "$failed" in *" $1 "*) return 0;; esac; return 1; }`)
	// Port names are [A-Za-z0-9._/:-]: safe inside a JSON string as they are.
	w(`fail() { failed="$failed$1 "; report="$report${report:+,}\"$1\":{\"ok\":false,\"task\":\"$2\",\"msg\":\"$(printf '%%s' "$3" | tr '\n\r\t' '   ' | sed 's/\\/\\\\/g; s/"/\\"/g')\"}"; }`)
	w(`live() { has "$1" && ! failed "$1"; }`)
	for i, v := range ports {
		w("vsctl_%d() { ovs-vsctl --timeout=30 %s; }", i, shWords(ovsPortArgs(v)))
		if v.ACL != nil {
			w("flows_%d() { printf '%%s\\n' %s; }", i, shWords(ovsFlowLines(v)))
		}
	}
	w("set --")
	for _, v := range ports {
		w(`if has %s; then set -- "$@" %s; else fail %s 'openvswitch: find the port' %s; fi`,
			shq(v.Port), shWords(ovsPortArgs(v)), shq(v.Port), shq(fmt.Sprintf("no row %q in table Port on bridge %s", v.Port, bridge)))
	}
	w(`if [ $# -gt 0 ] && ! out=$(ovs-vsctl --timeout=30 "$@" 2>&1); then`)
	for i, v := range ports {
		w(`  if live %s && ! out=$(vsctl_%d 2>&1); then fail %s %s "$out"; fi`, shq(v.Port), i, shq(v.Port), shq("openvswitch: set the VLANs of "+v.Port))
	}
	w("fi")
	w("flows() {")
	w("  :")
	for i, v := range ports {
		if v.ACL != nil {
			w("  if live %s; then flows_%d; fi", shq(v.Port), i)
		}
	}
	w("}")
	w(`if [ -n "$(flows)" ] && ! out=$(flows | ovs-ofctl --timeout=30 -O OpenFlow14 --bundle add-flows "$br" - 2>&1); then`)
	for i, v := range ports {
		if v.ACL != nil {
			w(`  if live %s && ! out=$(flows_%d | ovs-ofctl --timeout=30 -O OpenFlow14 --bundle add-flows "$br" - 2>&1); then fail %s %s "$out"; fi`,
				shq(v.Port), i, shq(v.Port), shq("openvswitch: set the OpenFlow rules of "+v.Port))
		}
	}
	w("fi")
	// One read of every interface's admin state; mod-port only where it differs.
	w(`states=$(ovs-vsctl --timeout=30 --format=csv --no-headings --columns=name,admin_state list Interface 2>/dev/null)`)
	w(`is() { case "$nl$states$nl" in *"$nl$1,$2$nl"*|*"$nl\"$1\",$2$nl"*) return 0;; esac; return 1; }`)
	for _, v := range ports {
		if !v.State {
			continue
		}
		want := "up"
		if v.Disabled {
			want = "down"
		}
		w(`if live %s && ! is %s %s && ! out=$(ovs-ofctl --timeout=30 mod-port "$br" %s %s 2>&1); then fail %s %s "$out"; fi`,
			shq(v.Port), shq(v.Port), want, shq(v.Port), want, shq(v.Port), shq(fmt.Sprintf("openvswitch: bring %s %s", v.Port, want)))
	}
	for _, v := range ports {
		w(`if live %s; then report="$report${report:+,}\"%s\":{\"ok\":true}"; fi`, shq(v.Port), v.Port)
	}
	w(`printf '{%%s}\n' "$report"`)
	return b.String()
}

// batchVars are the variables of apply_batch.yaml. The script travels as a file (the run's
// workspace writes it, Ansible's script module copies it over), never as an argument of the
// ssh command line, which Linux caps at 128 KiB: the access rules of a few ports pass that.
// The file is a small sh wrapper around the gzipped script, base64-encoded, so that what
// crosses the link is about a twentieth of the script (it repeats itself port after port).
func batchVars(script string, ports int) map[string]any {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	_, _ = w.Write([]byte(script))
	_ = w.Close()
	enc := base64.StdEncoding.EncodeToString(z.Bytes())
	var f strings.Builder
	f.WriteString("#!/bin/sh\nbase64 -d <<'RACKWIRE_SCRIPT' | gzip -dc | sh\n")
	for len(enc) > 76 {
		f.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	f.WriteString(enc + "\nRACKWIRE_SCRIPT\n")
	return map[string]any{
		"rackwire_script": scriptFile(f.String()),
		"rackwire_ports":  ports,
	}
}

// scriptFile is a variable of a run that the workspace writes to a file of its own; the
// playbook gets the file's path.
type scriptFile string
