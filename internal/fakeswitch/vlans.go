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

package fakeswitch

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// defaultVLAN is the VLAN every OS modelled here puts an unconfigured switch port in,
// untagged: the one VLAN all such ports of all tenants share.
const defaultVLAN = 1

// vlanSet is a set of VLAN ids; nil with all set means every VLAN (a Cisco trunk's default).
type vlanSet map[int]bool

func (v vlanSet) sorted() []int {
	out := make([]int, 0, len(v))
	for id := range v {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

var rangeDash = regexp.MustCompile(`\s*-\s*`)

// parseVLANs reads "5,60-63", "[ 5 100-200 300 ]", "60 - 63" and the like. ok is false for
// anything else, so a line the OS would refuse is refused.
func parseVLANs(s string) (vlanSet, bool) {
	s = strings.Trim(strings.TrimSpace(s), "[]")
	s = rangeDash.ReplaceAllString(s, "-")
	out := vlanSet{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		first, last, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(first)
		if err != nil {
			return nil, false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(last); err != nil {
				return nil, false
			}
		}
		if a < 1 || b > 4094 || a > b {
			return nil, false
		}
		for id := a; id <= b; id++ {
			out[id] = true
		}
	}
	return out, len(out) > 0
}

// portState is what the OS holds for one port; which fields matter depends on the OS.
type portState struct {
	trunk    bool
	access   int // access VLAN; on ENOS the PVID; on OS10 a trunk's untagged VLAN
	native   int // a Cisco trunk's native VLAN; a Junos trunk's native-vlan-id (0: none)
	allowed  vlanSet
	allowAll bool
	hybrid   bool // OS9: untagged in a non-default VLAN and tagged in others
	down     bool
	// EOS and NX-OS: "no switchport" makes a routed port, which carries no VLAN.
	routed      bool
	description string
	// bridged: a Cumulus port outside the bridge carries nothing.
	bridged bool
	pvid    int // Cumulus: 0 inherits the bridge's PVID
	vids    vlanSet
	members vlanSet // Junos: vlan members
	// OS9 membership, held by the VLAN interfaces.
	untaggedIn int
	taggedIn   vlanSet
}

func freshPort() *portState {
	return &portState{access: defaultVLAN, native: 0, allowAll: true, bridged: true, allowed: vlanSet{}, vids: vlanSet{}, members: vlanSet{}, taggedIn: vlanSet{}}
}

// PortView is what a port does with frames, whatever the OS.
type PortView struct {
	// Untagged is the VLAN that untagged frames received on the port join; 0 when they are
	// dropped.
	Untagged int
	// Tagged are the VLANs the port carries tagged, sorted.
	Tagged []int
	// Down: administratively disabled.
	Down bool
	// Bridged is false for a Cumulus port left out of the bridge (it carries nothing).
	Bridged bool
}

// view is the port as the OS forwards with it.
func (m *model) view(p *portState) PortView {
	v := PortView{Down: p.down, Bridged: p.bridged}
	tagged := vlanSet{}
	switch m.os {
	case "eos", "nxos":
		if p.routed {
			return v
		}
		if !p.trunk {
			v.Untagged = p.access
			break
		}
		native := p.native
		if native == 0 {
			native = defaultVLAN
		}
		carried := func(id int) bool { return p.allowAll || p.allowed[id] }
		if carried(native) {
			v.Untagged = native
		}
		if p.allowAll {
			v.Tagged = []int{-1} // every VLAN: never what a test wants
			return v
		}
		for id := range p.allowed {
			if id != native {
				tagged[id] = true
			}
		}
	case "enos":
		// ENOS keeps one PVID for access and trunk alike: a trunk without a native line keeps
		// whatever PVID the port had before.
		v.Untagged = p.access
		if p.trunk {
			for id := range p.allowed {
				if id != p.access {
					tagged[id] = true
				}
			}
		}
	case "dellos10":
		v.Untagged = p.access
		if p.trunk {
			for id := range p.allowed {
				tagged[id] = true
			}
		}
	case "dellemc.os9.os9":
		v.Untagged = p.untaggedIn
		if v.Untagged == 0 {
			v.Untagged = defaultVLAN // an L2 port is untagged in the default VLAN until moved
		}
		tagged = p.taggedIn
	case "junos":
		if p.trunk {
			v.Untagged = p.native
			for id := range p.members {
				if id != p.native {
					tagged[id] = true
				}
			}
		} else if ids := p.members.sorted(); len(ids) == 1 {
			v.Untagged = ids[0]
		}
	case "cumulus":
		if !p.bridged {
			return v
		}
		if !p.trunk && p.access != 0 {
			v.Untagged = p.access
			break
		}
		v.Untagged = p.pvid
		if v.Untagged == 0 {
			v.Untagged = defaultVLAN // ifupdown2: a bridge port without bridge-pvid takes the bridge's
		}
		vids := p.vids
		if len(vids) == 0 {
			vids = m.vlans // and without bridge-vids, the bridge's vids
		}
		for id := range vids {
			if id != v.Untagged {
				tagged[id] = true
			}
		}
	}
	v.Tagged = tagged.sorted()
	return v
}
