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

package fakeswitch_test

import (
	"slices"
	"testing"

	"github.com/rackwire/rackwire/internal/fakeswitch"
	"github.com/rackwire/rackwire/internal/netcli"
)

// These tests push renderings into the fake switch's model of each OS and check what the
// ports then carry, not which lines were sent.

const parking = 4000

var portsOf = map[string][]string{
	"eos":             {"Ethernet1", "Ethernet2", "Ethernet3"},
	"nxos":            {"Ethernet1/1", "Ethernet1/2", "Ethernet1/3"},
	"dellos10":        {"ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/3"},
	"dellemc.os9.os9": {"TenGigabitEthernet0/1", "TenGigabitEthernet0/2", "TenGigabitEthernet0/3"},
	"enos":            {"1", "2", "3"},
	"junos":           {"ge-0/0/1", "ge-0/0/2", "ge-0/0/3"},
	"cumulus":         {"swp1", "swp2", "swp3"},
}

func fake(t *testing.T, os string) *fakeswitch.Switch {
	t.Helper()
	s, err := fakeswitch.Start(fakeswitch.Options{OS: os, User: "u", Password: "p", Ports: portsOf[os]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func push(t *testing.T, s *fakeswitch.Switch, os string, ports ...netcli.Port) {
	t.Helper()
	d, _ := netcli.Lookup(os)
	if err := s.Apply(d.Render(ports).Lines(func(string) bool { return true })); err != nil {
		t.Fatalf("%s refused the push: %v", os, err)
	}
}

func ids(first, last int, more ...int) []int {
	var out []int
	for i := first; i <= last; i++ {
		out = append(out, i)
	}
	return append(out, more...)
}

// Defect 1 of issue 27: a port with tagged VLANs and no untagged one carried the device's
// default VLAN untagged (Cumulus' bridge pvid 1, OS10's access VLAN 1, ENOS' previous PVID,
// OS9's default VLAN), shared by every such port of every tenant. Now its untagged frames
// are dropped or land on the parking VLAN, on every OS.
func TestTaggedOnlyPortCarriesNothingUntagged(t *testing.T) {
	for _, os := range netcli.OSes() {
		t.Run(os, func(t *testing.T) {
			s := fake(t, os)
			p := portsOf[os]
			// The ports held another tenant's access VLAN before.
			push(t, s, os, netcli.Port{Name: p[0], Untagged: 77, Parking: parking}, netcli.Port{Name: p[2], Untagged: 77, Parking: parking})
			push(t, s, os,
				netcli.Port{Name: p[0], Untagged: 60, Parking: parking},
				netcli.Port{Name: p[1], Untagged: 5, Tagged: []netcli.Range{{First: 100, Last: 200}, {First: 300, Last: 300}}, Parking: parking},
				netcli.Port{Name: p[2], Tagged: []netcli.Range{{First: 61, Last: 63}}, Disabled: true, Parking: parking})
			for _, c := range []struct {
				port     string
				untagged []int
				tagged   []int
				down     bool
			}{
				{p[0], []int{60}, nil, false},
				{p[1], []int{5}, ids(100, 200, 300), false},
				{p[2], []int{0, parking}, ids(61, 63), true},
			} {
				got := s.PortState(c.port)
				if !slices.Contains(c.untagged, got.Untagged) || !slices.Equal(got.Tagged, c.tagged) || got.Down != c.down || !got.Bridged {
					t.Errorf("port %s carries untagged %d, tagged %v, down %v, bridged %v; want untagged one of %v, tagged %v, down %v, bridged",
						c.port, got.Untagged, got.Tagged, got.Down, got.Bridged, c.untagged, c.tagged, c.down)
				}
			}
		})
	}
}

// Defect 2 of issue 27: Junos VLAN objects were named after each run's merged ranges, so a
// later run shaping the same VLANs differently committed a second object with the same
// vlan-id, and junos refused every later commit touching them.
func TestJunosVLANObjectsAreKeyedByID(t *testing.T) {
	s := fake(t, "junos")
	p := portsOf["junos"]
	push(t, s, "junos", netcli.Port{Name: p[0], Tagged: []netcli.Range{{First: 60, Last: 63}}, Parking: parking})
	push(t, s, "junos", netcli.Port{Name: p[1], Untagged: 61, Parking: parking}, netcli.Port{Name: p[2], Tagged: []netcli.Range{{First: 62, Last: 70}}, Parking: parking})
	push(t, s, "junos", netcli.Port{Name: p[0], Untagged: 60, Tagged: []netcli.Range{{First: 61, Last: 65}}, Parking: parking})
	owners := map[int][]string{}
	for name, vids := range s.JunosVLANs() {
		for _, id := range vids {
			owners[id] = append(owners[id], name)
		}
	}
	for id, names := range owners {
		if len(names) != 1 {
			t.Errorf("vlan-id %d is held by %d objects: %v", id, len(names), names)
		}
	}
	if got := s.PortState(p[1]); got.Untagged != 61 {
		t.Errorf("port %s carries untagged %d, want 61", p[1], got.Untagged)
	}
	if got := s.PortState(p[0]); got.Untagged != 60 || !slices.Equal(got.Tagged, ids(61, 65)) {
		t.Errorf("port %s carries untagged %d tagged %v, want 60 and 61-65", p[0], got.Untagged, got.Tagged)
	}
}

// Defect 3 of issue 27: after "net del interface" the port left the bridge (network-runner
// adds it back), and edits someone left pending were committed with rackwire's.
func TestCumulusPortsStayBridgedAndForeignEditsAreAborted(t *testing.T) {
	s := fake(t, "cumulus")
	push(t, s, "cumulus", netcli.Port{Name: "swp1", Untagged: 10, Parking: parking}, netcli.Port{Name: "swp3", Tagged: []netcli.Range{{First: 20, Last: 21}}, Untagged: 30, Parking: parking})
	s.Pend("net add bridge bridge ports swp2")
	s.Pend("net add interface swp2 bridge access 10")
	push(t, s, "cumulus", netcli.Port{Name: "swp1", Untagged: 11, Parking: parking})
	if got := s.PortState("swp1"); !got.Bridged || got.Untagged != 11 {
		t.Errorf("swp1: bridged %v untagged %d, want a bridge port of VLAN 11", got.Bridged, got.Untagged)
	}
	if got := s.PortState("swp3"); !got.Bridged || got.Untagged != 30 || !slices.Equal(got.Tagged, []int{20, 21}) {
		t.Errorf("swp3: %+v, want a bridge port untagged 30 tagged 20-21", got)
	}
	if got := s.PortState("swp2"); got.Bridged {
		t.Errorf("swp2 joined the bridge (%+v): an edit left pending by someone else was committed with rackwire's", got)
	}
}

// A trunk given other VLANs, as a tenant trunk cleaned to a tagged provisioning
// configuration is, carries the new VLANs only, on every OS. OS10's "switchport trunk allowed
// vlan" adds to the VLANs the trunk allowed: the first tenant's VLANs stayed on the port.
func TestTrunkGivenOtherVLANsCarriesOnlyThem(t *testing.T) {
	for _, os := range netcli.OSes() {
		t.Run(os, func(t *testing.T) {
			s := fake(t, os)
			p := portsOf[os][0]
			push(t, s, os, netcli.Port{Name: p, Untagged: 5, Tagged: []netcli.Range{{First: 100, Last: 101}}, Parking: parking})
			push(t, s, os, netcli.Port{Name: p, Tagged: []netcli.Range{{First: 200, Last: 200}}, Parking: parking})
			if got := s.PortState(p); !slices.Equal(got.Tagged, []int{200}) || (got.Untagged != 0 && got.Untagged != parking) {
				t.Errorf("port %s carries untagged %d, tagged %v; want tagged [200] only and nothing untagged but the parking VLAN", p, got.Untagged, got.Tagged)
			}
		})
	}
}

// A trunk cleaned back to the parking VLAN carries that VLAN untagged and nothing tagged, on
// every OS.
func TestTrunkCleanedToParkingCarriesOnlyIt(t *testing.T) {
	for _, os := range netcli.OSes() {
		t.Run(os, func(t *testing.T) {
			s := fake(t, os)
			p := portsOf[os][0]
			push(t, s, os, netcli.Port{Name: p, Untagged: 5, Tagged: []netcli.Range{{First: 100, Last: 101}}, Parking: parking})
			push(t, s, os, netcli.Port{Name: p, Untagged: parking, Parking: parking})
			if got := s.PortState(p); got.Untagged != parking || len(got.Tagged) != 0 || !got.Bridged {
				t.Errorf("port %s carries untagged %d, tagged %v, bridged %v; want the parking VLAN untagged only", p, got.Untagged, got.Tagged, got.Bridged)
			}
		})
	}
}
