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
	"maps"
	"strconv"
	"strings"
)

// switchportLine applies the interface lines that EOS and NX-OS take beyond the ones every
// Cisco-like OS shares: routed and switched ports, the allowed list edited in place, the
// description. network-runner's eos and nxos providers send them. handled is false for a
// line left to portLine.
func (m *model) switchportLine(p *portState, line string) (handled, ok bool) {
	if m.os != "eos" && m.os != "nxos" {
		return false, false
	}
	switch {
	case line == "switchport":
		p.routed = false
	case line == "no switchport":
		p.routed = true
	case line == "no switchport mode":
		p.trunk = false
	case line == "no description":
		p.description = ""
	case strings.HasPrefix(line, "description "):
		p.description = strings.TrimPrefix(line, "description ")
	case strings.HasPrefix(line, "switchport trunk allowed vlan "):
		return true, editAllowed(p, strings.TrimPrefix(line, "switchport trunk allowed vlan "))
	default:
		return false, false
	}
	return true, true
}

// editAllowed is "switchport trunk allowed vlan" with its keywords: none, all, add, remove,
// except, or a list that replaces the allowed one.
func editAllowed(p *portState, arg string) bool {
	switch arg {
	case "none":
		p.allowed, p.allowAll = vlanSet{}, false
		return true
	case "all":
		p.allowed, p.allowAll = vlanSet{}, true
		return true
	}
	verb, list, found := strings.Cut(arg, " ")
	if !found || (verb != "add" && verb != "remove" && verb != "except") {
		ids, ok := parseVLANs(arg)
		if ok {
			p.allowed, p.allowAll = ids, false
		}
		return ok
	}
	ids, ok := parseVLANs(list)
	if !ok {
		return false
	}
	switch verb {
	case "add":
		if !p.allowAll {
			maps.Copy(p.allowed, ids)
		}
	case "remove":
		if p.allowAll {
			p.allowed, p.allowAll = everyVLAN(), false
		}
		for id := range ids {
			delete(p.allowed, id)
		}
	case "except":
		p.allowed, p.allowAll = everyVLAN(), false
		for id := range ids {
			delete(p.allowed, id)
		}
	}
	return true
}

func everyVLAN() vlanSet {
	out := vlanSet{}
	for id := 1; id <= 4094; id++ {
		out[id] = true
	}
	return out
}

// rangesText prints ids as the Cisco-like OSes do: "5,100-101".
func rangesText(ids []int) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}

// allowedText is a trunk's allowed list as "show running-config" and NX-OS' switchport
// read print it.
func allowedText(p *portState) string {
	switch {
	case p.allowAll:
		return "1-4094"
	case len(p.allowed) == 0:
		return "none"
	}
	return rangesText(p.allowed.sorted())
}

// portConfig is the non-default configuration of one EOS or NX-OS port, in the order and
// indentation of the OS's running configuration (EOS indents by three, NX-OS by two).
func (m *model) portConfig(name string, indent string) []string {
	p := m.ports[key(name)]
	lines := []string{"interface " + name}
	add := func(l string) { lines = append(lines, indent+l) }
	if p.description != "" {
		add("description " + p.description)
	}
	if p.routed {
		add("no switchport")
	}
	if p.trunk {
		add("switchport mode trunk")
	}
	if p.access != defaultVLAN {
		add("switchport access vlan " + strconv.Itoa(p.access))
	}
	if p.native != 0 {
		add("switchport trunk native vlan " + strconv.Itoa(p.native))
	}
	if !p.allowAll {
		add("switchport trunk allowed vlan " + allowedText(p))
	}
	if p.down {
		add("shutdown")
	} else if m.os == "nxos" {
		add("no shutdown") // NX-OS prints the admin state of every Ethernet port
	}
	return lines
}

// vlanLine is the VLANs created beyond the default one, as one "vlan" line.
func (m *model) vlanLine() string {
	var ids []int
	for _, id := range m.vlans.sorted() {
		// EOS never prints the default VLAN.
		if id != defaultVLAN || m.os != "eos" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return "vlan " + rangesText(ids)
}
