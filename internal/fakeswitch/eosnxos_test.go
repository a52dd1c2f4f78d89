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
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

func startOS(t *testing.T, os string, ports ...string) *Switch {
	t.Helper()
	s, err := Start(Options{OS: os, User: "u", Password: "p", Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// readJSON runs a read as a session would and decodes its JSON answer.
func readJSON(t *testing.T, s *Switch, cmd string) map[string]any {
	t.Helper()
	out := newCLI(s).run(cmd)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: not JSON (%v): %q", cmd, err, out)
	}
	return v
}

// The reads network-runner's nxos provider decides from: after the lines, the JSON says what
// the port now is.
func TestNXOSJSONReflectsThePort(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		// switchport: the ROW_interface fields of "show interface <port> switchport | json".
		switchport map[string]any
		admin      string
		// config: lines the running configuration holds under the port.
		config []string
	}{
		{"fresh", nil,
			map[string]any{"switchport": "Enabled", "oper_mode": "access", "access_vlan": 1.0, "native_vlan": 1.0, "trunk_vlans": "1-4094"},
			"up", []string{"  no shutdown"}},
		{"access", []string{"interface Ethernet1/1", "description web", "switchport access vlan 60"},
			map[string]any{"switchport": "Enabled", "oper_mode": "access", "access_vlan": 60.0, "trunk_vlans": "1-4094"},
			"up", []string{"  description web", "  switchport access vlan 60", "  no shutdown"}},
		{"trunk built by additions", []string{"interface Ethernet1/1", "switchport mode trunk", "switchport trunk allowed vlan none",
			"switchport trunk allowed vlan add 100", "switchport trunk allowed vlan add 101", "switchport trunk allowed vlan add 5",
			"switchport trunk native vlan 5"},
			map[string]any{"oper_mode": "trunk", "native_vlan": 5.0, "trunk_vlans": "5,100-101"},
			"up", []string{"  switchport mode trunk", "  switchport trunk native vlan 5", "  switchport trunk allowed vlan 5,100-101", "  no shutdown"}},
		{"trunk without VLANs", []string{"interface Ethernet1/1", "switchport mode trunk", "switchport trunk allowed vlan none"},
			map[string]any{"oper_mode": "trunk", "trunk_vlans": "none"},
			"up", []string{"  switchport mode trunk", "  switchport trunk allowed vlan none", "  no shutdown"}},
		{"removal from all", []string{"interface Ethernet1/1", "switchport mode trunk", "switchport trunk allowed vlan remove 2-4093"},
			map[string]any{"trunk_vlans": "1,4094"}, "up", []string{"  switchport mode trunk", "  switchport trunk allowed vlan 1,4094", "  no shutdown"}},
		{"shut down", []string{"interface Ethernet1/1", "shutdown"},
			map[string]any{"switchport": "Enabled"}, "down", []string{"  shutdown"}},
		{"routed", []string{"interface Ethernet1/1", "no switchport"},
			map[string]any{"switchport": "Disabled"}, "up", []string{"  no switchport", "  no shutdown"}},
		{"reset to defaults", []string{"interface Ethernet1/1", "no switchport", "shutdown", "exit", "default interface Ethernet1/1"},
			map[string]any{"switchport": "Enabled", "oper_mode": "access", "trunk_vlans": "1-4094"}, "up", []string{"  no shutdown"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startOS(t, "nxos", "Ethernet1/1", "Ethernet1/2")
			if err := s.Apply(c.lines); err != nil {
				t.Fatal(err)
			}
			row := readJSON(t, s, "show interface Ethernet1/1 switchport | json")["TABLE_interface"].(map[string]any)["ROW_interface"].(map[string]any)
			if row["interface"] != "Ethernet1/1" {
				t.Errorf("interface %v", row["interface"])
			}
			for k, want := range c.switchport {
				if row[k] != want {
					t.Errorf("switchport %s: %#v, want %#v", k, row[k], want)
				}
			}
			iface := readJSON(t, s, "show interface Ethernet1/1 | json")["TABLE_interface"].(map[string]any)["ROW_interface"].(map[string]any)
			if iface["admin_state"] != c.admin {
				t.Errorf("admin_state %v, want %s", iface["admin_state"], c.admin)
			}
			config := newCLI(s).run("show running-config")
			block := config[strings.Index(config, "interface Ethernet1/1\n"):strings.Index(config, "interface Ethernet1/2\n")]
			if got := strings.Split(strings.TrimSpace(block), "\n")[1:]; !slices.Equal(got, c.config) {
				t.Errorf("running configuration of the port:\n%s\nwant %q", block, c.config)
			}
		})
	}
}

func TestNXOSReadOfAMissingPortIsRefused(t *testing.T) {
	s := startOS(t, "nxos", "Ethernet1/1")
	for _, cmd := range []string{"show interface Ethernet1/9 switchport | json", "show interface Ethernet1/9 | json"} {
		if out := newCLI(s).run(cmd); !strings.Contains(out, "Invalid") {
			t.Errorf("%s: %q", cmd, out)
		}
	}
}

// network-runner's eos provider checks the port is in "show interfaces | json".
func TestEOSInterfacesJSONReflectsThePorts(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		want  map[string]any
	}{
		{"fresh", nil, map[string]any{"interfaceStatus": "connected", "lineProtocolStatus": "up", "forwardingModel": "bridged", "description": ""}},
		{"described", []string{"interface Ethernet1", "description web"}, map[string]any{"description": "web"}},
		{"description removed", []string{"interface Ethernet1", "description web", "no description"}, map[string]any{"description": ""}},
		{"shut down", []string{"interface Ethernet1", "shutdown"}, map[string]any{"interfaceStatus": "disabled", "lineProtocolStatus": "down"}},
		{"routed", []string{"interface Ethernet1", "no switchport"}, map[string]any{"forwardingModel": "routed"}},
		{"switched again", []string{"interface Ethernet1", "no switchport", "switchport"}, map[string]any{"forwardingModel": "bridged"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startOS(t, "eos", "Ethernet1", "Ethernet2")
			if err := s.Apply(c.lines); err != nil {
				t.Fatal(err)
			}
			all := readJSON(t, s, "show interfaces | json")["interfaces"].(map[string]any)
			if got := slices.Sorted(maps.Keys(all)); !slices.Equal(got, []string{"Ethernet1", "Ethernet2"}) {
				t.Fatalf("interfaces %v", got)
			}
			one := readJSON(t, s, "show interfaces Ethernet1 | json")["interfaces"].(map[string]any)
			for _, p := range []map[string]any{all["Ethernet1"].(map[string]any), one["Ethernet1"].(map[string]any)} {
				for k, want := range c.want {
					if p[k] != want {
						t.Errorf("%s: %#v, want %#v", k, p[k], want)
					}
				}
			}
			if len(one) != 1 {
				t.Errorf("show interfaces Ethernet1 answers %d interfaces", len(one))
			}
		})
	}
	s := startOS(t, "eos", "Ethernet1")
	if out := newCLI(s).run("show interfaces Ethernet9 | json"); !strings.Contains(out, "Invalid") {
		t.Errorf("a missing port's read: %q", out)
	}
}

// What the EOS port lines the role's clean_config sends do to what the port carries.
func TestEOSSwitchportLines(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		want  PortView
	}{
		{"routed carries nothing", []string{"switchport access vlan 60", "no switchport"}, PortView{Bridged: true}},
		{"mode reset", []string{"switchport mode trunk", "no switchport mode", "switchport access vlan 60"}, PortView{Untagged: 60, Tagged: []int{}, Bridged: true}},
		{"native not allowed drops untagged", []string{"switchport mode trunk", "switchport trunk native vlan 5", "switchport trunk allowed vlan 100,101"},
			PortView{Tagged: []int{100, 101}, Bridged: true}},
		{"added to an explicit list", []string{"switchport mode trunk", "switchport trunk allowed vlan 100", "switchport trunk allowed vlan add 5", "switchport trunk native vlan 5"},
			PortView{Untagged: 5, Tagged: []int{100}, Bridged: true}},
		{"all but some", []string{"switchport mode trunk", "switchport trunk allowed vlan except 2-4093", "switchport trunk allowed vlan remove 4094"},
			PortView{Untagged: 1, Tagged: []int{}, Bridged: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startOS(t, "eos", "Ethernet1")
			if err := s.Apply(append([]string{"interface Ethernet1"}, c.lines...)); err != nil {
				t.Fatal(err)
			}
			if got := s.PortState("Ethernet1"); got.Untagged != c.want.Untagged || !slices.Equal(got.Tagged, c.want.Tagged) || got.Bridged != c.want.Bridged {
				t.Errorf("port carries %+v, want %+v", got, c.want)
			}
		})
	}
}

// An EOS configuration session changes nothing until it is committed, survives "end", and
// an aborted one leaves nothing behind.
func TestEOSConfigurationSession(t *testing.T) {
	s := startOS(t, "eos", "Ethernet1", "Ethernet2")
	c := newCLI(s)
	run := func(cmds ...string) string {
		var out string
		for _, cmd := range cmds {
			out = c.run(cmd)
		}
		return out
	}
	diff := run("configure session a", "interface Ethernet1", "switchport access vlan 60", "show session-config diffs")
	if !strings.Contains(diff, "+   switchport access vlan 60") || strings.Contains(diff, "Ethernet2") {
		t.Errorf("session diff:\n%s", diff)
	}
	run("end")
	if got := s.PortState("Ethernet1").Untagged; got != 1 || s.Unsaved() {
		t.Fatalf("before commit the port carries %d untagged (unsaved %v)", got, s.Unsaved())
	}
	if out := run("configure session a", "show session-config"); !strings.Contains(out, "switchport access vlan 60") {
		t.Fatalf("the session was not taken up again:\n%s", out)
	}
	run("commit")
	if got := s.PortState("Ethernet1").Untagged; got != 60 || !s.Unsaved() {
		t.Fatalf("after commit the port carries %d untagged (unsaved %v)", got, s.Unsaved())
	}
	if out := run("show running-config"); !strings.Contains(out, "interface Ethernet1\n   switchport access vlan 60\n!") {
		t.Errorf("running configuration:\n%s", out)
	}

	run("configure session b", "interface Ethernet2", "shutdown", "end", "configure session b", "abort")
	if s.PortState("Ethernet2").Down {
		t.Error("an aborted session shut the port down")
	}
	if out := run("configure session c", "interface Ethernet1", "switchport access vlan 60", "show session-config diffs"); out != "" {
		t.Errorf("a session that changes nothing shows a diff:\n%s", out)
	}
	run("abort")

	// A session another login aborted is gone: its lines never land.
	run("configure session e", "interface Ethernet2", "shutdown")
	other := newCLI(s)
	other.run("configure session e")
	other.run("abort")
	if out := run("commit"); !strings.Contains(out, "no longer exists") || s.PortState("Ethernet2").Down {
		t.Errorf("commit of an aborted session: %q, port down %v", out, s.PortState("Ethernet2").Down)
	}

	// An unprivileged login opens no session.
	s2, err := Start(Options{OS: "eos", User: "u", Password: "p", Enable: "e", Ports: []string{"Ethernet1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if out := newCLI(s2).run("configure session d"); out != invalid {
		t.Errorf("unprivileged configure session: %q", out)
	}
}
