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

package netcli

import (
	"slices"
	"sort"
	"strings"
)

// Dialect is how one network OS is read and configured.
type Dialect struct {
	// Shell means commands go to a Linux shell over plain SSH (Cumulus' NCLU), not to a
	// network CLI session (Ansible's network_cli).
	Shell bool
	// Reads are the commands that read the ports; the first one lists every port of the
	// switch, configured or not, for PortPattern.
	Reads []string
	// PortPattern finds the names of the switch's ports in the output of Reads[0] (its
	// first group; spaces are dropped from the match, as OS9 prints "TenGigabitEthernet 0/1").
	// Empty when no read lists unconfigured ports: a missing port then fails its push.
	PortPattern string
	// Save keeps the running configuration across a reboot where the OS holds it apart;
	// empty when the push itself persists (a junos commit, an NCLU commit).
	Save string
	// Enable tells whether a login may land in an unprivileged mode left with "enable" and a
	// secret. NX-OS and OS10 users log in with the privileges of their role.
	Enable bool
	// OnboxDiff: the OS compares the candidate with its configuration itself (junos), so
	// cli_config takes no diff_match.
	OnboxDiff bool
	// Module is the collection's module that pushes the lines where the OS's cliconf plugin
	// does not give cli_config what it needs (cli_config would push nothing, or refuse
	// diff_match); empty for ansible.netcommon.cli_config.
	Module string
	// Why tells where the OS's support comes from, for the documentation and the webhooks.
	Why string
	// Legacy reads the VLAN objects that older rackwire versions named by range (junos:
	// "rackwire-<first>-<last>" with a vlan-id-list); each run replaces them with one object
	// per id before its own, since junos refuses two objects holding one vlan-id. Empty where
	// nothing was ever named so.
	Legacy string

	vlans func(ranges []Range) []string
	port  func(p Port) []string
	tail  []string
}

// Range is a run of VLAN ids, First <= Last.
type Range struct{ First, Last int }

// dialects are the OSes of the AnsibleSwitch enum but openvswitch.
var dialects = map[string]Dialect{
	"eos":             ciscoLike("show running-config", "write memory", true, "Arista EOS through arista.eos's network_cli plugins (one configure session)"),
	"nxos":            ciscoLike("show running-config interface", "copy running-config startup-config", false, "Cisco NX-OS through cisco.nxos's network_cli plugins"),
	"dellos10":        dellOS10(),
	"dellemc.os9.os9": dellOS9(),
	"enos":            lenovoENOS(),
	"junos":           junos(),
	"cumulus":         cumulus(),
}

// Lookup returns the dialect of an OS.
func Lookup(os string) (Dialect, bool) {
	d, ok := dialects[os]
	return d, ok
}

// OSes are the OSes with a dialect, sorted.
func OSes() []string {
	out := make([]string, 0, len(dialects))
	for os := range dialects {
		out = append(out, os)
	}
	sort.Strings(out)
	return out
}

// Port is the wanted configuration of one port. Untagged 0 means no untagged VLAN; a port
// with Tagged VLANs is a trunk, one with only Untagged an access port.
type Port struct {
	Name     string
	Untagged int
	Tagged   []Range
	Disabled bool
	// Parking is the switch's parking VLAN: the native VLAN of a trunk with no untagged VLAN,
	// so that its untagged frames land on an isolated VLAN, never on the device's default
	// VLAN that every such port of every tenant shares.
	Parking int
}

func (p Port) trunk() bool { return len(p.Tagged) > 0 }

// native is the VLAN that the port's untagged frames join: its untagged VLAN, or for a trunk
// without one the parking VLAN, where the OS would otherwise put them on its default VLAN.
// 0 when the port names neither.
func (p Port) native() int {
	if p.Untagged != 0 || !p.trunk() {
		return p.Untagged
	}
	return p.Parking
}

// Description is what rackwire writes on a port it configures.
const Description = "managed by rackwire"

// Block is the lines of one port: a port's block stands alone, so a port found missing
// before the push, or refused by it, is left out without touching the others. Head creates
// the port's own VLANs, for its push alone: with the VLANs of every port, a VLAN the switch
// refuses (junos' own "default" object holds vlan-id 1) would fail every port's retry.
type Block struct {
	Port  string
	Head  []string
	Lines []string
}

// Push is the whole configuration of a run: Head (the VLANs, created before any port uses
// them), one Block per port, then Tail (what ends the push: NCLU's commit).
type Push struct {
	Head   []string
	Blocks []Block
	Tail   []string
}

// Lines is the push with only the blocks of the ports kept.
func (p Push) Lines(keep func(port string) bool) []string {
	out := slices.Clone(p.Head)
	for _, b := range p.Blocks {
		if keep(b.Port) {
			out = append(out, b.Lines...)
		}
	}
	return append(out, p.Tail...)
}

// Render renders the ports' configuration in one push. The VLANs of every port are created
// first, as ranges; a port's lines set everything it holds, so it ends as the change says
// whatever it held before.
func (d Dialect) Render(ports []Port) Push {
	var used []Range
	for _, p := range ports {
		used = append(used, p.vlans()...)
	}
	out := Push{Head: d.shape(d.vlans(merge(used))), Tail: slices.Clone(d.tail)}
	for _, p := range ports {
		out.Blocks = append(out.Blocks, Block{Port: p.Name, Head: d.shape(d.vlans(merge(p.vlans()))), Lines: d.shape(d.port(p))})
	}
	return out
}

// vlans are the VLANs the port uses: its native one and its tagged ones.
func (p Port) vlans() []Range {
	var out []Range
	if n := p.native(); n != 0 {
		out = append(out, Range{n, n})
	}
	return append(out, p.Tagged...)
}

// shape readies lines for the OS's push. The collections' config modules (Module) read
// their text as a configuration tree, by indentation, and merge the sections that repeat:
// there, what follows a section's opening line is indented under it and the "exit" that
// closes the section goes, the module entering each section itself.
func (d Dialect) shape(lines []string) []string {
	if d.Module == "" {
		return lines
	}
	out := make([]string, 0, len(lines))
	in := false
	for _, l := range lines {
		switch {
		case l == "exit":
			in = false
		case in:
			out = append(out, " "+l)
		default:
			out = append(out, l)
			in = strings.HasPrefix(l, "interface ") || strings.HasPrefix(l, "vlan ")
		}
	}
	return out
}

// merge sorts ranges and joins those that overlap or touch.
func merge(rs []Range) []Range {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b Range) int { return a.First - b.First })
	var out []Range
	for _, r := range rs {
		if n := len(out); n > 0 && r.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}
