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
	"fmt"
	"strconv"
	"strings"
)

// list prints ranges as "60,100-200" (sep ",") or "60 100-200" (sep " ").
func list(rs []Range, sep string) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = rangeText(r, "-")
	}
	return strings.Join(s, sep)
}

func rangeText(r Range, dash string) string {
	if r.First == r.Last {
		return strconv.Itoa(r.First)
	}
	return strconv.Itoa(r.First) + dash + strconv.Itoa(r.Last)
}

// allowed is what a trunk carries: its tagged VLANs and its untagged (native) one.
func allowed(p Port) []Range {
	if p.Untagged == 0 {
		return p.Tagged
	}
	return merge(append([]Range{{p.Untagged, p.Untagged}}, p.Tagged...))
}

func shutdown(p Port) string {
	if p.Disabled {
		return "shutdown"
	}
	return "no shutdown"
}

// ciscoLike is EOS and NX-OS: "vlan 60,100-200" creates every VLAN of the list, and an
// interface takes its mode, native VLAN and allowed list directly.
func ciscoLike(read, save string, enable bool, why string) Dialect {
	return Dialect{
		Reads: []string{read}, PortPattern: `(?m)^interface (\S+)`, Save: save, Enable: enable, Why: why,
		vlans: func(rs []Range) []string {
			if len(rs) == 0 {
				return nil
			}
			return []string{"vlan " + list(rs, ","), "exit"}
		},
		port: func(p Port) []string {
			lines := []string{"interface " + p.Name, "description " + Description, "switchport"}
			if p.trunk() {
				lines = append(lines, "switchport mode trunk", "no switchport access vlan")
				// The parking VLAN as native VLAN of a tagged-only trunk is left out of its
				// allowed list: untagged frames are dropped, and VLAN 1 is never the native one.
				if n := p.native(); n != 0 {
					lines = append(lines, "switchport trunk native vlan "+strconv.Itoa(n))
				} else {
					lines = append(lines, "no switchport trunk native vlan")
				}
				lines = append(lines, "switchport trunk allowed vlan "+list(allowed(p), ","))
			} else {
				lines = append(lines, "switchport mode access", "switchport access vlan "+strconv.Itoa(p.Untagged),
					"no switchport trunk native vlan", "no switchport trunk allowed vlan")
			}
			return append(lines, shutdown(p), "exit")
		},
	}
}

// dellOS10: VLANs are interfaces ("interface vlan 60", "interface range vlan 100-200"); on a
// trunk the access VLAN is the untagged one.
func dellOS10() Dialect {
	return Dialect{
		Reads: []string{"show running-configuration interface"}, PortPattern: `(?m)^interface (\S+)`,
		Save: "write memory", Module: "dellemc.os10.os10_config",
		Why: "Dell OS10 through dellemc.os10's network_cli plugins and os10_config",
		vlans: func(rs []Range) []string {
			var lines []string
			for _, r := range rs {
				if r.First == r.Last {
					lines = append(lines, "interface vlan "+strconv.Itoa(r.First), "exit")
				} else {
					lines = append(lines, "interface range vlan "+rangeText(r, "-"), "exit")
				}
			}
			return lines
		},
		port: func(p Port) []string {
			lines := []string{"interface " + p.Name, "description " + Description}
			if p.trunk() {
				lines = append(lines, "switchport mode trunk")
				// OS10's "no switchport access vlan" puts the port back in VLAN 1 untagged: a
				// tagged-only trunk is an untagged member of the parking VLAN instead.
				if n := p.native(); n != 0 {
					lines = append(lines, "switchport access vlan "+strconv.Itoa(n))
				} else {
					lines = append(lines, "no switchport access vlan")
				}
				// OS10's allowed line adds to the VLANs the trunk allowed: they go first, or a
				// tenant's VLANs stay on the port given to the next one.
				lines = append(lines, "no switchport trunk allowed vlan", "switchport trunk allowed vlan "+list(p.Tagged, ","))
			} else {
				lines = append(lines, "switchport mode access", "switchport access vlan "+strconv.Itoa(p.Untagged), "no switchport trunk allowed vlan")
			}
			return append(lines, shutdown(p), "exit")
		},
	}
}

// dellOS9: a port joins a VLAN from the VLAN's interface ("untagged", "tagged"), so a port's
// block resets the port (as the network-runner role does), then visits its VLANs.
func dellOS9() Dialect {
	return Dialect{
		Reads: []string{"show running-config interface"}, PortPattern: `(?m)^interface (\S+ ?\d\S*)`,
		Save: "write memory", Enable: true, Module: "dellemc.os9.os9_config",
		Why: "Dell OS9 through dellemc.os9's network_cli plugins and os9_config",
		vlans: func(rs []Range) []string {
			var lines []string
			for _, r := range rs {
				lines = append(lines, vlanInterface9(r), "no shutdown", "exit")
			}
			return lines
		},
		port: func(p Port) []string {
			lines := []string{"default interface " + p.Name, "interface " + p.Name, "description " + Description}
			// A port left out of every untagged list stays untagged in the default VLAN: a
			// tagged-only trunk is a hybrid port, untagged in the parking VLAN.
			if p.trunk() && p.native() != 0 {
				lines = append(lines, "portmode hybrid")
			}
			lines = append(lines, "switchport", shutdown(p), "exit")
			if n := p.native(); n != 0 {
				lines = append(lines, "interface vlan "+strconv.Itoa(n), "untagged "+p.Name, "exit")
			}
			for _, r := range p.Tagged {
				lines = append(lines, vlanInterface9(r), "tagged "+p.Name, "exit")
			}
			return lines
		},
	}
}

func vlanInterface9(r Range) string {
	if r.First == r.Last {
		return "interface vlan " + strconv.Itoa(r.First)
	}
	return "interface range vlan " + rangeText(r, " - ")
}

// lenovoENOS: ports are "interface port <n>". No read lists the ports that carry no
// configuration, so a missing port is found by its push failing.
func lenovoENOS() Dialect {
	return Dialect{
		Reads: []string{"show running-config"}, Save: "copy running-config startup-config", Enable: true,
		Module: "community.network.enos_config",
		Why:    "Lenovo ENOS through community.network's network_cli plugins and enos_config",
		vlans: func(rs []Range) []string {
			var lines []string
			for _, r := range rs {
				lines = append(lines, "vlan "+rangeText(r, "-"), "exit")
			}
			return lines
		},
		port: func(p Port) []string {
			lines := []string{"interface port " + p.Name}
			if p.trunk() {
				// ENOS keeps one PVID per port, access or trunk: without a native line a trunk
				// keeps the PVID it had (an earlier tenant's access VLAN, or VLAN 1).
				lines = append(lines, "switchport mode trunk", "switchport trunk allowed vlan "+list(allowed(p), ","))
				if n := p.native(); n != 0 {
					lines = append(lines, "switchport trunk native vlan "+strconv.Itoa(n))
				}
			} else {
				lines = append(lines, "switchport mode access", "switchport access vlan "+strconv.Itoa(p.Untagged))
			}
			return append(lines, shutdown(p), "exit")
		},
	}
}

// junos: set commands in one candidate, committed once. Every VLAN is one object named by
// its id (rackwire-<id>), as network-runner's create_vlan makes them: junos refuses two
// objects with one vlan-id, so objects named after a run's ranges would clash with the
// next run's. A trunk without an untagged VLAN gets no native-vlan-id, so junos drops its
// untagged frames.
func junos() Dialect {
	return Dialect{
		Reads:       []string{"show interfaces terse", "show configuration interfaces | display set"},
		PortPattern: `(?m)^([a-z]+-\d+/\d+/\d+)\s+(?:up|down)`, OnboxDiff: true,
		Legacy: "show configuration vlans | display set",
		Why:    "Juniper Junos (ELS) through junipernetworks.junos's network_cli plugins (one commit)",
		vlans: func(rs []Range) []string {
			var lines []string
			for _, r := range rs {
				for id := r.First; id <= r.Last; id++ {
					lines = append(lines, fmt.Sprintf("set vlans rackwire-%d vlan-id %d", id, id))
				}
			}
			return lines
		},
		port: func(p Port) []string {
			set := "set interfaces " + p.Name + " "
			sw := set + "unit 0 family ethernet-switching "
			lines := []string{"delete interfaces " + p.Name, set + `description "` + Description + `"`}
			if p.trunk() {
				lines = append(lines, sw+"interface-mode trunk", sw+"vlan members [ "+list(allowed(p), " ")+" ]")
				if p.Untagged != 0 {
					lines = append(lines, set+"native-vlan-id "+strconv.Itoa(p.Untagged))
				}
			} else {
				lines = append(lines, sw+"interface-mode access", sw+"vlan members "+strconv.Itoa(p.Untagged))
			}
			if p.Disabled {
				lines = append(lines, set+"disable")
			}
			return lines
		},
	}
}

// cumulus: NCLU commands in one pending change, committed once; commit persists it.
func cumulus() Dialect {
	return Dialect{
		Shell: true, Reads: []string{"ip -o link show", "net show configuration commands"},
		PortPattern: `(?m)^\d+: ([^:@\s]+)[:@]`,
		Why:         "Cumulus Linux through NCLU over SSH (one net commit)",
		// NCLU keeps one pending change per switch, whoever made it: "net abort" first, so
		// that an edit someone left pending is never committed with rackwire's.
		vlans: func(rs []Range) []string {
			if len(rs) == 0 {
				return []string{"net abort"}
			}
			return []string{"net abort", "net add bridge bridge vids " + list(rs, ",")}
		},
		port: func(p Port) []string {
			add := "net add interface " + p.Name + " "
			// "net del interface" takes the port out of the bridge too: it goes back in, as
			// network-runner's conf_trunk_port does. A trunk's pvid is its untagged VLAN or
			// the parking VLAN, never the bridge's pvid (1) that every such port shares.
			lines := []string{"net del interface " + p.Name, "net add bridge bridge ports " + p.Name,
				add + "alias " + strings.ReplaceAll(Description, " ", "-")}
			if p.trunk() {
				lines = append(lines, add+"bridge vids "+list(p.Tagged, ","))
				if n := p.native(); n != 0 {
					lines = append(lines, add+"bridge pvid "+strconv.Itoa(n))
				}
			} else {
				lines = append(lines, add+"bridge access "+strconv.Itoa(p.Untagged))
			}
			if p.Disabled {
				lines = append(lines, add+"link down")
			}
			return lines
		},
		tail: []string{"net commit"},
	}
}
