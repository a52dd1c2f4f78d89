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
	"strings"
)

// The reads of EOS and NX-OS, answered from the model: network-runner's eos provider checks
// that a port exists in "show interfaces | json"; its nxos provider decides what to send from
// "show interface <port> switchport | json" (switchport, oper_mode, native_vlan, trunk_vlans)
// and "show interface <port> | json" (admin_state), and diffs its lines against "show
// running-config". The JSON carries the fields those tasks read, named and typed as the
// devices print them, and a few neighbours; nothing else of a real device's answer.

func eosShow(s *Switch, cmd string) string {
	switch cmd {
	case "show version | json":
		return `{"version": "4.30.0F", "modelName": "vEOS-lab"}` + "\n"
	case "show hostname | json":
		return `{"hostname": "switch", "fqdn": "switch"}` + "\n"
	case "show configuration sessions":
		return "Maximum number of completed sessions: 1\nMaximum number of pending sessions: 5\n"
	case "show running-config":
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.model.runningConfig(s.opts.Ports, false)
	}
	if rest, ok := strings.CutPrefix(cmd, "show interfaces"); ok {
		if name, ok := strings.CutSuffix(rest, " | json"); ok {
			return eosInterfaces(s, strings.TrimSpace(name))
		}
	}
	return ""
}

// eosInterfaces is "show interfaces [<port>] | json".
func eosInterfaces(s *Switch, only string) string {
	if only != "" && !s.hasPort(only) {
		return invalid
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{}
	for _, name := range s.opts.Ports {
		if only != "" && key(only) != key(name) {
			continue
		}
		p := s.model.ports[key(name)]
		status, protocol, forwarding := "connected", "up", "bridged"
		if p.down {
			status, protocol = "disabled", "down"
		}
		if p.routed {
			forwarding = "routed"
		}
		out[name] = map[string]any{
			"name": name, "description": p.description, "hardware": "ethernet",
			"interfaceStatus": status, "lineProtocolStatus": protocol, "forwardingModel": forwarding,
			"mtu": 9214, "bandwidth": 10000000000, "interfaceAddress": []any{},
		}
	}
	return jsonText(map[string]any{"interfaces": out})
}

// nxosVersion and nxosInventory are what cisco.nxos' cliconf reads the OS version, model,
// hostname and platform from.
const (
	nxosVersion = `Cisco Nexus Operating System (NX-OS) Software
Software
  NXOS: version 9.3(8)
  NXOS image file is: bootflash:///nxos.9.3.8.bin
Hardware
  cisco Nexus9000 C9300v Chassis
  Device name: switch
`
	nxosInventory = `NAME: "Chassis",  DESCR: "Nexus9000 C9300v Chassis"
PID: N9K-C9300v          ,  VID:     ,  SN: 9N3KD63KWT0
`
)

func nxosShow(s *Switch, cmd string) string {
	switch cmd {
	case "show version":
		return nxosVersion
	case "show inventory":
		return nxosInventory
	case "show running-config", "show running-config interface":
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.model.runningConfig(s.opts.Ports, cmd == "show running-config interface")
	}
	rest, ok := strings.CutPrefix(cmd, "show interface ")
	if !ok {
		return ""
	}
	if name, ok := strings.CutSuffix(rest, " switchport | json"); ok {
		return nxosRow(s, name, nxosSwitchport)
	}
	if name, ok := strings.CutSuffix(rest, " | json"); ok {
		return nxosRow(s, name, nxosInterface)
	}
	return ""
}

// nxosRow is NX-OS' JSON for one interface: one ROW_interface in TABLE_interface.
func nxosRow(s *Switch, name string, row func(name string, p *portState) map[string]any) string {
	if !s.hasPort(name) {
		return "% Invalid interface format at '^' marker.\n"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return jsonText(map[string]any{"TABLE_interface": map[string]any{"ROW_interface": row(name, s.model.ports[key(name)])}})
}

// nxosSwitchport is "show interface <port> switchport": a routed port reports its
// switchport disabled and nothing else.
func nxosSwitchport(name string, p *portState) map[string]any {
	if p.routed {
		return map[string]any{"interface": name, "switchport": "Disabled"}
	}
	mode, native := "access", p.native
	if p.trunk {
		mode = "trunk"
	}
	if native == 0 {
		native = defaultVLAN
	}
	return map[string]any{
		"interface": name, "switchport": "Enabled", "switchport_monitor": "Not enabled",
		"oper_mode": mode, "access_vlan": p.access, "native_vlan": native, "trunk_vlans": allowedText(p),
	}
}

// nxosInterface is "show interface <port>".
func nxosInterface(name string, p *portState) map[string]any {
	state, mode := "up", "access"
	switch {
	case p.routed:
		mode = "routed"
	case p.trunk:
		mode = "trunk"
	}
	row := map[string]any{
		"interface": name, "state": state, "admin_state": state, "share_state": "Dedicated",
		"eth_hw_desc": "100/1000/10000 Ethernet", "eth_mtu": "1500", "eth_mode": mode,
	}
	if p.down {
		row["state"], row["admin_state"], row["state_rsn_desc"] = "down", "down", "Administratively down"
	}
	if p.description != "" {
		row["desc"] = p.description
	}
	return row
}

func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // maps of strings, numbers and lists always marshal
	}
	return string(b) + "\n"
}

// runningConfig is EOS' or NX-OS' running configuration, as far as the model holds it;
// interfacesOnly is NX-OS' "show running-config interface".
func (m *model) runningConfig(ports []string, interfacesOnly bool) string {
	indent, sep := "  ", ""
	if m.os == "eos" {
		indent, sep = "   ", "!"
	}
	var lines []string
	if !interfacesOnly {
		lines = append(lines, "hostname switch")
		if sep != "" {
			lines = append(lines, sep)
		}
		if v := m.vlanLine(); v != "" {
			lines = append(lines, v)
			if sep != "" {
				lines = append(lines, sep)
			}
		}
	}
	for _, name := range ports {
		lines = append(lines, m.portConfig(name, indent)...)
		if sep != "" {
			lines = append(lines, sep)
		}
	}
	if m.os == "eos" && !interfacesOnly {
		lines = append(lines, "end")
	}
	return strings.Join(lines, "\n") + "\n"
}
