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
	"slices"
	"strconv"
	"strings"
)

// pendingMark is the line after which "net pending" lists the commands since the last commit;
// the nclu module compares what comes before it (the configuration diff) to tell whether its
// commands changed anything, and commits only then.
const pendingMark = `net add/del commands since the last "net commit"`

// ncluControl answers the NCLU commands that act on the pending change as a whole: pending,
// commit, abort and the last commit. ok is false for any other command.
func (s *Switch) ncluControl(cmd string) (out, errText string, ok bool) {
	f := strings.Fields(cmd)
	if len(f) < 2 || f[0] != "net" {
		return "", "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.model
	switch {
	case f[1] == "pending" && len(f) == 2:
		return m.pendingText(), "", true
	case f[1] == "abort" && len(f) == 2:
		m.pending = nil
		return "", "", true
	// "net commit" and "net commit description <text>" (the nclu module's).
	case f[1] == "commit" && (len(f) == 2 || f[2] == "description"):
		if len(m.pending) == 0 {
			return "commit ignored, there are no pending changes\n", "", true
		}
		diff := m.pendingDiff()
		if err := m.ncluCommit(); err != nil {
			return "", err.Error(), true
		}
		m.lastCommit = diff
		return diff, "", true
	case strings.Join(f[1:], " ") == "show commit last":
		return m.lastCommit, "", true
	}
	return "", "", false
}

// pendingText is "net pending": the diff that committing would make, then the commands.
func (m *model) pendingText() string {
	if len(m.pending) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(m.pendingDiff())
	b.WriteString("\n" + pendingMark + "\n")
	b.WriteString(strings.Repeat("=", len(pendingMark)) + "\n\n")
	for _, l := range m.pending {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// pendingDiff is what committing the pending edits would change in the configuration, as
// lines removed (-) and added (+); empty when the edits change nothing (or would be refused:
// the commit says why).
func (m *model) pendingDiff() string {
	after := m.clone()
	if err := after.ncluCommit(); err != nil {
		return ""
	}
	old, cur := m.interfaces(), after.interfaces()
	var b strings.Builder
	for _, l := range old {
		if !slices.Contains(cur, l) {
			b.WriteString("-" + l + "\n")
		}
	}
	for _, l := range cur {
		if !slices.Contains(old, l) {
			b.WriteString("+" + l + "\n")
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "--- /etc/network/interfaces\n+++ pending\n" + b.String()
}

// interfaces is the configuration NCLU would write for the model, one line per setting,
// each naming its interface (so that equal settings of two ports are two lines).
func (m *model) interfaces() []string {
	var out, members []string
	for _, name := range slices.Sorted(maps.Keys(m.ports)) {
		p := m.ports[name]
		if p.bridged {
			members = append(members, name)
		}
		switch {
		case !p.trunk && p.access != 0:
			out = append(out, name+" bridge-access "+strconv.Itoa(p.access))
		case p.trunk:
			if len(p.vids) > 0 {
				out = append(out, name+" bridge-vids "+ints(p.vids.sorted()))
			}
			if p.pvid != 0 {
				out = append(out, name+" bridge-pvid "+strconv.Itoa(p.pvid))
			}
		}
		if p.down {
			out = append(out, name+" link-down yes")
		}
	}
	head := []string{"bridge bridge-ports " + strings.Join(members, " "), "bridge bridge-vids " + ints(m.vlans.sorted())}
	return append(head, out...)
}

func ints(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, " ")
}

// clone is a copy of the model that a preview may change.
func (m *model) clone() *model {
	c := *m
	c.ports = map[string]*portState{}
	for k, p := range m.ports {
		q := *p
		q.allowed, q.vids, q.members, q.taggedIn = maps.Clone(p.allowed), maps.Clone(p.vids), maps.Clone(p.members), maps.Clone(p.taggedIn)
		c.ports[k] = &q
	}
	c.vlans = maps.Clone(m.vlans)
	c.junosVLANs = map[string]vlanSet{}
	for n, ids := range m.junosVLANs {
		c.junosVLANs[n] = maps.Clone(ids)
	}
	c.pending = slices.Clone(m.pending)
	return &c
}

// freshAccess is an unconfigured port's access VLAN: a Cumulus port has no bridge-access
// (as a bridge member it is a trunk of the bridge's VLANs); elsewhere the default VLAN.
func freshAccess(os string) int {
	if os == "cumulus" {
		return 0
	}
	return defaultVLAN
}
