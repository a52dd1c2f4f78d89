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
	"slices"
	"strings"
)

// personality is how one OS's CLI looks.
type personality struct {
	// junos: "user@switch>" and a candidate configuration committed by "commit".
	junos bool
	// show answers exec-mode commands; a command not listed answers nothing.
	show func(s *Switch, cmd string) string
}

var personalities = map[string]personality{
	"eos":             {show: eosShow},
	"nxos":            {show: nxosShow},
	"dellos10":        {show: ciscoShow("show running-configuration interface")},
	"dellemc.os9.os9": {show: os9Show},
	"enos":            {show: ciscoShow("show running-config")},
	"junos":           {junos: true, show: junosShow},
	"cumulus":         {}, // commands come as exec requests: cumulusCommand
}

// invalid is how the Cisco-like CLIs refuse a line; every network_cli terminal plugin of
// those OSes takes "invalid input" for an error.
const invalid = "% Invalid input detected at '^' marker.\n"

func runningConfig(s *Switch) string {
	var b strings.Builder
	for _, p := range s.opts.Ports {
		fmt.Fprintf(&b, "interface %s\n   no shutdown\n!\n", p)
	}
	return b.String()
}

func ciscoShow(read string) func(s *Switch, cmd string) string {
	return func(s *Switch, cmd string) string {
		if cmd == read {
			return runningConfig(s)
		}
		return ""
	}
}

func os9Show(s *Switch, cmd string) string {
	if cmd != "show running-config interface" {
		return ""
	}
	var b strings.Builder
	for _, p := range s.opts.Ports {
		// OS9 prints "TenGigabitEthernet 0/1" for TenGigabitEthernet0/1.
		i := strings.IndexAny(p, "0123456789")
		fmt.Fprintf(&b, "interface %s %s\n no ip address\n shutdown\n!\n", p[:i], p[i:])
	}
	return b.String()
}

func junosShow(s *Switch, cmd string) string {
	switch cmd {
	case "show configuration vlans | display set":
		// Objects of one id as vlan-id, of a range (older rackwire versions) as vlan-id-list.
		var b strings.Builder
		objects := s.JunosVLANs()
		for _, n := range slices.Sorted(maps.Keys(objects)) {
			ids := objects[n]
			if len(ids) == 1 {
				fmt.Fprintf(&b, "set vlans %s vlan-id %d\n", n, ids[0])
				continue
			}
			fmt.Fprintf(&b, "set vlans %s vlan-id-list %d-%d\n", n, ids[0], ids[len(ids)-1])
		}
		return b.String()
	case "show version":
		return "Hostname: switch\nModel: ex4300-48t\nJunos: 21.4R3\n"
	case "show interfaces terse":
		var b strings.Builder
		b.WriteString("Interface               Admin Link Proto    Local                 Remote\n")
		for _, p := range s.opts.Ports {
			fmt.Fprintf(&b, "%-23s up    up\n", p)
		}
		return b.String()
	}
	return ""
}

// cli is the state of one interactive session.
type cli struct {
	s          *Switch
	p          personality
	privileged bool
	// depth: 0 exec mode, 1 configuration, 2 a configuration sub-mode.
	depth   int
	secret  bool // the next line is the enable secret (not echoed)
	pending []string
	// section is the configuration section the session is in, for the model.
	section string
	// session is the EOS configuration session being edited (eossession.go).
	session string
}

func newCLI(s *Switch) *cli {
	return &cli{s: s, p: personalities[s.opts.OS], privileged: s.opts.Enable == ""}
}

func (c *cli) prompt() string {
	switch {
	case c.secret:
		return "Password: "
	case c.p.junos && c.depth > 0:
		return "\n[edit]\n" + c.s.opts.User + "@switch# "
	case c.p.junos:
		return c.s.opts.User + "@switch> "
	case c.depth == 2:
		return "switch(config-if)#"
	case c.depth == 1:
		return "switch(config)#"
	case c.privileged:
		return "switch#"
	}
	return "switch>"
}

var (
	ciscoInterface = regexp.MustCompile(`^interface (?:port )?(\S+(?: \d\S*)?)$`)
	ciscoPortRef   = regexp.MustCompile(`^(?:default interface|untagged|tagged) (\S+)$`)
	junosPortRef   = regexp.MustCompile(`^(?:set|delete) interfaces (\S+)`)
)

// run answers one line and returns its output.
func (c *cli) run(cmd string) string {
	if c.secret {
		c.secret = false
		c.s.record("<enable secret>")
		if cmd != c.s.opts.Enable {
			return "% Bad secret\n"
		}
		c.privileged = true
		return ""
	}
	c.s.record(cmd)
	if c.p.junos {
		return c.junos(cmd)
	}
	if out, ok := c.eosSession(cmd); ok {
		return out
	}
	switch {
	case cmd == "":
		return ""
	case cmd == "enable":
		if !c.privileged {
			c.secret = true
		}
		return ""
	case cmd == "disable":
		c.privileged = c.s.opts.Enable == ""
		return ""
	case cmd == "configure" || cmd == "configure terminal" || strings.HasPrefix(cmd, "configure session "):
		if !c.privileged {
			return invalid
		}
		c.depth = 1
		return ""
	case cmd == "end" || cmd == "commit" || cmd == "abort":
		c.depth = 0
		return ""
	case cmd == "exit":
		c.depth = max(c.depth-1, 0)
		c.section = ""
		return ""
	case c.depth > 0:
		return c.configLine(cmd)
	case !c.privileged && !strings.HasPrefix(cmd, "show ") && !strings.HasPrefix(cmd, "terminal"):
		return invalid
	case cmd == "write memory" || cmd == "copy running-config startup-config":
		c.s.mu.Lock()
		saved := c.s.model.save(c.s.opts.RefuseSave)
		c.s.mu.Unlock()
		if !saved {
			return "% Authorization denied for command '" + cmd + "'\n" + invalid
		}
		return "Copy completed successfully.\n"
	}
	return c.p.show(c.s, cmd)
}

func (c *cli) configLine(cmd string) string {
	if m := ciscoInterface.FindStringSubmatch(cmd); m != nil {
		if !strings.HasPrefix(m[1], "vlan") && !strings.HasPrefix(cmd, "interface range") && !c.s.hasPort(m[1]) {
			return invalid
		}
	}
	if m := ciscoPortRef.FindStringSubmatch(cmd); m != nil && !c.s.hasPort(m[1]) {
		return invalid
	}
	if strings.HasPrefix(cmd, "vlan ") || strings.HasPrefix(cmd, "interface ") {
		c.depth = 2
	}
	c.s.mu.Lock()
	ok := c.configTarget().ciscoLine(&c.section, cmd)
	c.s.mu.Unlock()
	if !ok {
		return invalid
	}
	return ""
}

func (c *cli) junos(cmd string) string {
	switch {
	case cmd == "configure" || cmd == "config" || cmd == "configure private" || cmd == "configure exclusive":
		c.depth = 1
		return "Entering configuration mode\n"
	case c.depth == 0:
		return c.p.show(c.s, cmd)
	case cmd == "commit" || strings.HasPrefix(cmd, "commit "):
		c.s.mu.Lock()
		err := c.s.model.junosCommit(c.pending)
		c.s.mu.Unlock()
		if err != nil {
			return err.Error() + "\n"
		}
		c.pending = nil
		if strings.HasSuffix(cmd, "and-quit") {
			c.depth = 0
		}
		return "commit complete\n"
	case cmd == "show | compare":
		var b strings.Builder
		for _, l := range c.pending {
			b.WriteString("+ " + l + "\n")
		}
		return b.String()
	case cmd == "rollback 0":
		c.pending = nil
		return "load complete\n"
	case cmd == "exit" || cmd == "exit configuration-mode":
		c.depth = 0
		return "Exiting configuration mode\n"
	case cmd == "top":
		return ""
	}
	if m := junosPortRef.FindStringSubmatch(cmd); m != nil && !c.s.hasPort(m[1]) {
		return "\nerror: interface " + m[1] + " does not exist on this switch\n"
	}
	c.pending = append(c.pending, junosComplete(cmd))
	return ""
}

// junosNativeAbbrev is a Junos trunk's native VLAN statement typed short: "native-vlan"
// is no statement of its own, but the only one under [edit interfaces <name>] that it
// begins is native-vlan-id.
var junosNativeAbbrev = regexp.MustCompile(`^(set interfaces \S+ native-vlan)( \d+)$`)

// junosComplete completes a keyword typed short as the Junos CLI does by default when the
// word is followed by a space ("set cli complete-on-space": "complete a partial command
// entry when you type a space or a tab. This is the default behavior of the CLI", Junos CLI
// User Guide). Only the one abbreviation this switch is known to be sent is completed:
// network-runner's junos conf_trunk_port sends "native-vlan <id>".
func junosComplete(cmd string) string {
	return junosNativeAbbrev.ReplaceAllString(cmd, "${1}-id${2}")
}

// cumulusCommand answers one command of a Cumulus shell: output, or an error for stderr.
func cumulusCommand(s *Switch, cmd string) (string, string) {
	if out, errText, ok := s.ncluControl(cmd); ok {
		return out, errText
	}
	switch {
	case cmd == "ip -o link show":
		var b strings.Builder
		b.WriteString("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN\n")
		for i, p := range s.opts.Ports {
			fmt.Fprintf(&b, "%d: %s: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9216 state UP\n", i+2, p)
		}
		return b.String(), ""
	case strings.HasPrefix(cmd, "net add interface ") || strings.HasPrefix(cmd, "net del interface "):
		port := strings.Fields(cmd)[3]
		if !s.hasPort(port) {
			return "", "ERROR: Command not found. " + port + " is not an interface"
		}
		s.Pend(cmd)
		return "", ""
	case strings.HasPrefix(cmd, "net add ") || strings.HasPrefix(cmd, "net del "):
		s.Pend(cmd)
		return "", ""
	case strings.HasPrefix(cmd, "net "):
		return "", ""
	}
	return "", "sh: 1: " + strings.Fields(cmd + " x")[0] + ": not found"
}
