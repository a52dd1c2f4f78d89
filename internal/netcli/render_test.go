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
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	access := Port{Name: "e1", Untagged: 60}
	trunk := Port{Name: "e2", Untagged: 5, Tagged: []Range{{100, 200}, {300, 300}}}
	tagged := Port{Name: "e3", Tagged: []Range{{61, 63}}, Disabled: true}
	for _, tc := range []struct {
		os   string
		want []string // lines that must appear, in this order
	}{
		{"eos", []string{"vlan 5,60-63,100-200,300", "interface e1", "switchport access vlan 60", "no shutdown",
			"interface e2", "switchport trunk native vlan 5", "switchport trunk allowed vlan 5,100-200,300",
			"interface e3", "no switchport trunk native vlan", "switchport trunk allowed vlan 61-63", "shutdown"}},
		{"nxos", []string{"vlan 5,60-63,100-200,300", "interface e2", "switchport trunk allowed vlan 5,100-200,300"}},
		{"dellos10", []string{"interface vlan 5", "interface range vlan 60-63", "interface range vlan 100-200",
			"interface e2", " switchport mode trunk", " switchport access vlan 5", " switchport trunk allowed vlan 100-200,300"}},
		{"dellemc.os9.os9", []string{"interface range vlan 60 - 63", "default interface e1", "interface vlan 60", " untagged e1",
			"interface e2", " portmode hybrid", "interface range vlan 100 - 200", " tagged e2"}},
		{"enos", []string{"vlan 60-63", "interface port e1", " switchport access vlan 60",
			"interface port e2", " switchport trunk allowed vlan 5,100-200,300", " switchport trunk native vlan 5"}},
		{"junos", []string{"set vlans rackwire-60 vlan-id 60", "set vlans rackwire-63 vlan-id 63", "set vlans rackwire-100 vlan-id 100",
			"delete interfaces e1", "set interfaces e1 unit 0 family ethernet-switching vlan members 60",
			"set interfaces e2 unit 0 family ethernet-switching vlan members [ 5 100-200 300 ]", "set interfaces e2 native-vlan-id 5",
			"set interfaces e3 disable"}},
		{"cumulus", []string{"net add bridge bridge vids 5,60-63,100-200,300", "net add interface e1 bridge access 60",
			"net add interface e2 bridge vids 100-200,300", "net add interface e2 bridge pvid 5", "net add interface e3 link down", "net commit"}},
	} {
		t.Run(tc.os, func(t *testing.T) {
			d, ok := Lookup(tc.os)
			if !ok {
				t.Fatalf("no dialect for %s", tc.os)
			}
			lines := d.Render([]Port{access, trunk, tagged}).Lines(func(string) bool { return true })
			at := 0
			for _, w := range tc.want {
				i := slices.Index(lines[at:], w)
				if i < 0 {
					t.Fatalf("%q missing after line %d of:\n%s", w, at, strings.Join(lines, "\n"))
				}
				at += i + 1
			}
		})
	}
}

// A port left out of a push takes none of its lines with it but leaves the VLANs (created
// for every port of the run, harmless) and the tail.
func TestLinesKeepsOnlyTheKeptPorts(t *testing.T) {
	d, _ := Lookup("cumulus")
	push := d.Render([]Port{{Name: "swp1", Untagged: 10}, {Name: "swp2", Untagged: 20}})
	lines := push.Lines(func(p string) bool { return p == "swp2" })
	text := strings.Join(lines, "\n")
	if strings.Contains(text, "swp1") || !strings.Contains(text, "swp2 bridge access 20") || lines[len(lines)-1] != "net commit" ||
		lines[0] != "net abort" || lines[1] != "net add bridge bridge vids 10,20" {
		t.Fatalf("unexpected push:\n%s", text)
	}
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct{ in, want []Range }{
		{nil, nil},
		{[]Range{{5, 5}, {1, 3}, {4, 4}}, []Range{{1, 5}}},
		{[]Range{{10, 20}, {15, 16}, {22, 30}}, []Range{{10, 20}, {22, 30}}},
	} {
		if got := merge(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("merge(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// Ranges stay ranges: 4094 VLANs render as one line, not 4094; but for junos' VLAN objects,
// one per id (junos refuses two objects with one vlan-id, so objects are keyed by id).
func FuzzRenderKeepsRanges(f *testing.F) {
	f.Add(1, 4094, 17, false)
	f.Add(100, 100, 0, true)
	f.Fuzz(func(t *testing.T, first, last, untagged int, disabled bool) {
		if first < 1 || last > 4094 || first > last || untagged < 0 || untagged > 4094 {
			t.Skip()
		}
		for _, os := range OSes() {
			d, _ := Lookup(os)
			push := d.Render([]Port{{Name: "p1", Untagged: untagged, Tagged: []Range{{first, last}}, Disabled: disabled}})
			head := len(push.Head)
			if os == "junos" {
				head = 0
				for _, l := range push.Head {
					if !strings.HasPrefix(l, "set vlans rackwire-") {
						head++
					}
				}
			}
			if n := head + len(push.Blocks[0].Lines); n > 40 {
				t.Fatalf("%s: %d lines for one range", os, n)
			}
			for _, l := range push.Lines(func(string) bool { return true }) {
				if strings.ContainsAny(l, "\n\r") {
					t.Fatalf("%s: a line holds a line break: %q", os, l)
				}
			}
		}
	})
}

func BenchmarkRender96Ports(b *testing.B) {
	ports := make([]Port, 96)
	for i := range ports {
		ports[i] = Port{Name: "Ethernet" + string(rune('0'+i%10)), Untagged: 10 + i, Tagged: []Range{{100, 200}, {300 + i, 310 + i}}}
	}
	d, _ := Lookup("eos")
	for b.Loop() {
		_ = d.Render(ports).Lines(func(string) bool { return true })
	}
}
