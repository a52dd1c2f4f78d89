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
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
)

// model is the configuration a switch holds, interpreted as its OS would: what a rendering
// does to a port is read from here, not from the lines it sent.
type model struct {
	os    string
	ports map[string]*portState // keyed by name without spaces
	vlans vlanSet               // VLANs created (Cumulus: the bridge's vids)
	// junosVLANs are Junos VLAN objects, by name.
	junosVLANs map[string]vlanSet
	// unsaved: the running configuration differs from the one a reboot would load.
	unsaved bool
	// pending are NCLU edits not yet committed: one list per switch, shared by every login,
	// as NCLU keeps it.
	pending []string
	// lastCommit is what the last "net commit" changed ("net show commit last").
	lastCommit string
	// sessions are EOS configuration sessions not yet committed or aborted, by name.
	sessions map[string]*model
}

func newModel(os string, ports []string) *model {
	m := &model{os: os, ports: map[string]*portState{}, vlans: vlanSet{defaultVLAN: true}, junosVLANs: map[string]vlanSet{"default": {defaultVLAN: true}}}
	for _, p := range ports {
		st := freshPort()
		// A Cumulus switch port joins the bridge only when told to.
		st.bridged = os != "cumulus"
		st.access = freshAccess(os)
		m.ports[key(p)] = st
	}
	return m
}

func key(port string) string { return strings.ReplaceAll(port, " ", "") }

func (m *model) reset(port string) {
	if p, ok := m.ports[key(port)]; ok {
		*p = *freshPort()
		p.bridged = m.os != "cumulus"
		p.access = freshAccess(m.os)
	}
}

var (
	reVLANInterface = regexp.MustCompile(`^interface (?:range )?vlan (.+)$`)
	reInterface     = regexp.MustCompile(`^interface (?:port )?(\S+(?: \d\S*)?)$`)
	reVLAN          = regexp.MustCompile(`^vlan ([\d,\- ]+)$`)
)

// ciscoLine applies one configuration line of the Cisco-like OSes (EOS, NX-OS, OS9, OS10,
// ENOS); ctx is the session's current section ("if:<port>", "vlan:<ids>" or ""). ok is
// false for a line the OS would refuse.
func (m *model) ciscoLine(ctx *string, line string) bool {
	if rest, found := strings.CutPrefix(line, "default interface "); found {
		if _, ok := m.ports[key(rest)]; !ok {
			return false
		}
		m.reset(rest)
		m.unsaved = true
		return true
	}
	if g := reVLANInterface.FindStringSubmatch(line); g != nil {
		ids, ok := parseVLANs(g[1])
		if !ok {
			return false
		}
		maps.Copy(m.vlans, ids)
		*ctx = "vlan:" + g[1]
		m.unsaved = true
		return true
	}
	if g := reVLAN.FindStringSubmatch(line); g != nil {
		ids, ok := parseVLANs(g[1])
		if !ok {
			return false
		}
		maps.Copy(m.vlans, ids)
		*ctx = "vlan"
		m.unsaved = true
		return true
	}
	if g := reInterface.FindStringSubmatch(line); g != nil {
		if _, ok := m.ports[key(g[1])]; !ok {
			return false
		}
		*ctx = "if:" + key(g[1])
		return true
	}
	switch {
	case strings.HasPrefix(*ctx, "if:"):
		m.unsaved = true
		return m.portLine(m.ports[strings.TrimPrefix(*ctx, "if:")], line)
	case strings.HasPrefix(*ctx, "vlan:"):
		m.unsaved = true
		return m.vlanMemberLine(strings.TrimPrefix(*ctx, "vlan:"), line)
	}
	return true
}

func vlanID(s string) (int, bool) {
	id, err := strconv.Atoi(strings.TrimSpace(s))
	return id, err == nil && id >= 1 && id <= 4094
}

func (m *model) portLine(p *portState, line string) bool {
	if handled, ok := m.switchportLine(p, line); handled {
		return ok
	}
	switch {
	case line == "switchport mode trunk":
		p.trunk = true
		if m.os == "dellos10" || m.os == "enos" {
			p.allowAll = false
		}
	case line == "switchport mode access":
		p.trunk = false
	case strings.HasPrefix(line, "switchport access vlan "):
		id, ok := vlanID(strings.TrimPrefix(line, "switchport access vlan "))
		if !ok {
			return false
		}
		p.access = id
	case line == "no switchport access vlan":
		p.access = defaultVLAN
	case strings.HasPrefix(line, "switchport trunk native vlan "):
		id, ok := vlanID(strings.TrimPrefix(line, "switchport trunk native vlan "))
		if !ok {
			return false
		}
		if m.os == "enos" {
			p.access = id // ENOS' native VLAN is the port's PVID
		} else {
			p.native = id
		}
	case line == "no switchport trunk native vlan":
		p.native = 0
	case strings.HasPrefix(line, "switchport trunk allowed vlan "):
		ids, ok := parseVLANs(strings.TrimPrefix(line, "switchport trunk allowed vlan "))
		if !ok {
			return false
		}
		if m.os == "dellos10" {
			// OS10 adds the listed VLANs to those the trunk already allows: Dell's own
			// dellemc.os10 os10_vlan role makes a port a tagged member of each VLAN with one
			// "switchport trunk allowed vlan <id>" line per VLAN, and takes one out with
			// "no switchport trunk allowed vlan <id>" (roles/os10_vlan/templates/os10_vlan.j2).
			maps.Copy(p.allowed, ids)
			p.allowAll = false
			break
		}
		p.allowed, p.allowAll = ids, false
	case m.os == "dellos10" && strings.HasPrefix(line, "no switchport trunk allowed vlan "):
		ids, ok := parseVLANs(strings.TrimPrefix(line, "no switchport trunk allowed vlan "))
		if !ok {
			return false
		}
		for id := range ids {
			delete(p.allowed, id)
		}
	case line == "no switchport trunk allowed vlan":
		p.allowed = vlanSet{}
		p.allowAll = m.os == "eos" || m.os == "nxos"
	case line == "shutdown":
		p.down = true
	case line == "no shutdown":
		p.down = false
	case line == "portmode hybrid":
		p.hybrid = true
	}
	return true
}

// vlanMemberLine is OS9's "untagged <port>" and "tagged <port>" under a VLAN interface.
func (m *model) vlanMemberLine(idsText, line string) bool {
	ids, ok := parseVLANs(idsText)
	if !ok {
		return false
	}
	verb, port, found := strings.Cut(line, " ")
	if !found || (verb != "untagged" && verb != "tagged") {
		return true
	}
	p, ok := m.ports[key(port)]
	if !ok {
		return false
	}
	if verb == "tagged" {
		maps.Copy(p.taggedIn, ids)
		return true
	}
	list := ids.sorted()
	// OS9 lets a port be untagged in one VLAN; outside the default VLAN, while tagged in
	// others, only in hybrid mode.
	if len(list) != 1 || (list[0] != defaultVLAN && len(p.taggedIn) > 0 && !p.hybrid) {
		return false
	}
	p.untaggedIn = list[0]
	return true
}

// save is the OS's save command; it fails when the login may not save.
func (m *model) save(refuse bool) bool {
	if refuse {
		return false
	}
	m.unsaved = false
	return true
}

var reJunosPort = regexp.MustCompile(`^(set|delete) interfaces (\S+)(?: (.*))?$`)

// junosCommit applies a candidate as one transaction: it lands whole or not at all.
func (m *model) junosCommit(candidate []string) error {
	ports := map[string]*portState{}
	for k, p := range m.ports {
		c := *p
		c.members = maps.Clone(p.members)
		ports[k] = &c
	}
	objects := map[string]vlanSet{}
	for n, ids := range m.junosVLANs {
		objects[n] = maps.Clone(ids)
	}
	for _, l := range candidate {
		if name, ok := strings.CutPrefix(l, "delete vlans "); ok {
			delete(objects, strings.TrimSpace(name))
			continue
		}
		if rest, ok := strings.CutPrefix(l, "set vlans "); ok {
			f := strings.Fields(rest)
			if len(f) != 3 || (f[1] != "vlan-id" && f[1] != "vlan-id-list") {
				continue
			}
			ids, ok := parseVLANs(f[2])
			if !ok {
				return fmt.Errorf("syntax error: %s", l)
			}
			if f[1] == "vlan-id" {
				objects[f[0]] = ids
			} else {
				if objects[f[0]] == nil {
					objects[f[0]] = vlanSet{}
				}
				maps.Copy(objects[f[0]], ids)
			}
			continue
		}
		g := reJunosPort.FindStringSubmatch(l)
		if g == nil {
			continue
		}
		p := ports[g[2]]
		if g[1] == "delete" {
			*p = *freshPort()
			continue
		}
		rest := g[3]
		sw := "unit 0 family ethernet-switching "
		switch {
		case rest == sw+"interface-mode trunk":
			p.trunk = true
		case rest == sw+"interface-mode access":
			p.trunk = false
		case strings.HasPrefix(rest, sw+"vlan members "):
			ids, ok := parseVLANs(strings.TrimPrefix(rest, sw+"vlan members "))
			if !ok {
				return fmt.Errorf("syntax error: %s", l)
			}
			maps.Copy(p.members, ids)
		case strings.HasPrefix(rest, "native-vlan-id "):
			id, ok := vlanID(strings.TrimPrefix(rest, "native-vlan-id "))
			if !ok {
				return fmt.Errorf("syntax error: %s", l)
			}
			p.native = id
		case rest == "disable":
			p.down = true
		}
	}
	// What junos checks at commit: one object per vlan-id, every member VLAN defined.
	owner := map[int]string{}
	for n, ids := range objects {
		for id := range ids {
			if o, dup := owner[id]; dup {
				a, b := min(o, n), max(o, n)
				return fmt.Errorf("error: vlan-id %d is used by both vlans %s and %s\nerror: configuration check-out failed", id, a, b)
			}
			owner[id] = n
		}
	}
	for name, p := range ports {
		for id := range p.members {
			if _, ok := owner[id]; !ok {
				return fmt.Errorf("error: interface %s: vlan member %d is not defined under [vlans]\nerror: configuration check-out failed", name, id)
			}
		}
	}
	m.ports, m.junosVLANs = ports, objects
	return nil
}

// ncluCommit applies the pending NCLU edits, in order, and empties the list.
func (m *model) ncluCommit() error {
	edits := m.pending
	m.pending = nil
	for _, l := range edits {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		add := f[1] == "add"
		switch {
		case f[2] == "bridge" && len(f) >= 6 && f[4] == "ports":
			for _, name := range strings.Split(f[5], ",") {
				if p, ok := m.ports[name]; ok {
					p.bridged = add
				}
			}
		case f[2] == "bridge" && len(f) >= 6 && f[4] == "vids":
			ids, ok := parseVLANs(f[5])
			if !ok {
				return fmt.Errorf("ERROR: invalid vids in %q", l)
			}
			maps.Copy(m.vlans, ids)
		case f[2] == "vlan" && len(f) == 4:
			ids, ok := parseVLANs(f[3])
			if !ok {
				return fmt.Errorf("ERROR: invalid vlan in %q", l)
			}
			maps.Copy(m.vlans, ids)
		case f[2] == "interface" && len(f) >= 4:
			if err := m.ncluPort(add, f[3], f[4:]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *model) ncluPort(add bool, name string, words []string) error {
	p, ok := m.ports[name]
	if !ok {
		return fmt.Errorf("ERROR: %s is not an interface", name)
	}
	what := strings.Join(words, " ")
	switch {
	case !add && what == "":
		m.reset(name) // every setting of the port, its bridge membership included
	case what == "link down":
		p.down = add
	case add && strings.HasPrefix(what, "bridge access "):
		id, ok := vlanID(strings.TrimPrefix(what, "bridge access "))
		if !ok {
			return fmt.Errorf("ERROR: invalid %q", what)
		}
		p.trunk, p.access = false, id
	case add && strings.HasPrefix(what, "bridge vids "):
		ids, ok := parseVLANs(strings.TrimPrefix(what, "bridge vids "))
		if !ok {
			return fmt.Errorf("ERROR: invalid %q", what)
		}
		p.trunk, p.vids = true, ids
	case add && strings.HasPrefix(what, "bridge pvid "):
		id, ok := vlanID(strings.TrimPrefix(what, "bridge pvid "))
		if !ok {
			return fmt.Errorf("ERROR: invalid %q", what)
		}
		p.trunk, p.pvid = true, id
	}
	return nil
}

// PortState is what a port of the switch does with frames now.
func (s *Switch) PortState(name string) PortView {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.model.ports[key(name)]
	if !ok {
		return PortView{}
	}
	return s.model.view(p)
}

// JunosVLANs are the Junos VLAN objects the switch holds: name to sorted ids.
func (s *Switch) JunosVLANs() map[string][]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]int{}
	for n, ids := range s.model.junosVLANs {
		out[n] = ids.sorted()
	}
	return out
}

// Unsaved tells whether the running configuration holds changes a reboot would lose.
func (s *Switch) Unsaved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model.unsaved
}

// Pend leaves an NCLU edit pending, as someone logged in to the switch and walked away
// would: the next "net commit", whoever runs it, commits it too.
func (s *Switch) Pend(edit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model.pending = append(s.model.pending, edit)
}

// Apply runs configuration lines as one session of the OS would, then commits them where the
// OS commits (junos, NCLU) and saves where it saves apart; for tests that check what a
// rendering does without Ansible in between.
func (s *Switch) Apply(lines []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.model
	switch m.os {
	case "junos":
		return m.junosCommit(lines)
	case "cumulus":
		for _, l := range lines {
			switch l {
			case "net commit":
				if err := m.ncluCommit(); err != nil {
					return err
				}
			case "net abort":
				m.pending = nil
			default:
				m.pending = append(m.pending, l)
			}
		}
		return nil
	}
	ctx := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "exit" {
			ctx = ""
			continue
		}
		if !m.ciscoLine(&ctx, l) {
			return fmt.Errorf("%% Invalid input: %s", l)
		}
	}
	return nil
}
