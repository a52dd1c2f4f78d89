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
	"strings"
)

// EOS configuration sessions, as arista.eos' cliconf drives them ("configure session <name>",
// the lines, "show session-config diffs", then "commit", or "end", "configure session <name>",
// "abort"): a session edits a copy of the running configuration taken when it opens, and
// commit makes that copy the running one. Until then the ports are untouched, and an aborted
// session leaves nothing behind. A session survives "end" and is taken up again by name.

// sessionCopy is the configuration a new session starts from.
func (m *model) sessionCopy() *model {
	c := &model{os: m.os, ports: map[string]*portState{}, vlans: maps.Clone(m.vlans)}
	for k, p := range m.ports {
		cp := *p
		cp.allowed, cp.vids = maps.Clone(p.allowed), maps.Clone(p.vids)
		cp.members, cp.taggedIn = maps.Clone(p.members), maps.Clone(p.taggedIn)
		c.ports[k] = &cp
	}
	return c
}

// configTarget is the configuration the session's lines edit; the caller holds s.mu.
func (c *cli) configTarget() *model {
	if c.session != "" {
		return c.s.model.sessions[c.session]
	}
	return c.s.model
}

// eosSession answers a command that opens, shows, commits or leaves a configuration
// session; ok is false for every other command.
func (c *cli) eosSession(cmd string) (out string, ok bool) {
	if c.s.opts.OS != "eos" {
		return "", false
	}
	s, m := c.s, c.s.model
	if name, found := strings.CutPrefix(cmd, "configure session "); found {
		if !c.privileged {
			return invalid, true
		}
		s.mu.Lock()
		if m.sessions == nil {
			m.sessions = map[string]*model{}
		}
		if m.sessions[name] == nil {
			m.sessions[name] = m.sessionCopy()
		}
		s.mu.Unlock()
		c.session, c.depth, c.section = name, 1, ""
		return "", true
	}
	if c.session == "" {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ports := s.opts.Ports
	next := m.sessions[c.session]
	if next == nil {
		// Another login committed or aborted it.
		c.session, c.depth, c.section = "", 0, ""
		return "% Session no longer exists\n", true
	}
	switch {
	case cmd == "commit":
		delete(m.sessions, c.session)
		if next.runningConfig(ports, false) != m.runningConfig(ports, false) {
			m.ports, m.vlans, m.unsaved = next.ports, next.vlans, true
		}
	case cmd == "abort":
		delete(m.sessions, c.session)
	case cmd == "end" || (cmd == "exit" && c.depth == 1):
		// The session stays pending.
	case cmd == "show session-config diffs":
		return lineDiff("system:/running-config", "session:/"+c.session+"-session-config",
			m.runningConfig(ports, false), next.runningConfig(ports, false)), true
	case cmd == "show session-config":
		return next.runningConfig(ports, false), true
	default:
		return "", false
	}
	c.session, c.depth, c.section = "", 0, ""
	return "", true
}

// lineDiff prints the lines removed from a and added in b, each indented line compared
// with the block it belongs to (a port's "shutdown" is not another port's), without context;
// nothing when they are equal, which cli_config takes for "no change".
func lineDiff(nameA, nameB, a, b string) string {
	count := func(text string) ([]string, []string, map[string]int) {
		lines, keys, n := strings.Split(text, "\n"), []string{}, map[string]int{}
		parent := ""
		for _, l := range lines {
			k := l
			if strings.HasPrefix(l, " ") {
				k = parent + "\x00" + l
			} else {
				parent = l
			}
			keys = append(keys, k)
			n[k]++
		}
		return lines, keys, n
	}
	la, ka, na := count(a)
	lb, kb, nb := count(b)
	var out []string
	for i, k := range ka {
		if na[k] > nb[k] {
			na[k]--
			out = append(out, "-"+la[i])
		}
	}
	for i, k := range kb {
		if nb[k] > na[k] {
			nb[k]--
			out = append(out, "+"+lb[i])
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "--- " + nameA + "\n+++ " + nameB + "\n" + strings.Join(out, "\n") + "\n"
}
