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

package ansible

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rackwire/rackwire/internal/netcli"
	"github.com/rackwire/rackwire/internal/switchdriver"
	"github.com/rackwire/rackwire/internal/vlan"
)

// The OSes that take command lines (internal/netcli) are applied in one push per run
// (apply_cli.yaml) and checked by reading their ports (check_cli.yaml). ACLs have no
// rendering there and are refused per port, before the run.

// cliPort turns a change into the port of a push.
func (d *Driver) cliPort(c switchdriver.Change) (netcli.Port, error) {
	p := netcli.Port{Name: c.Port, Parking: c.Parking}
	if err := switchdriver.CheckChange(c); err != nil {
		return p, err
	}
	cfg := c.Config
	if len(cfg.ACL) > 0 {
		return p, fmt.Errorf("%w: access rules (acl) cannot be applied on os %s: rackwire renders ACLs for openvswitch only", ErrUnsupported, d.target.os)
	}
	if cfg.UntaggedVLAN != nil {
		p.Untagged = int(*cfg.UntaggedVLAN)
	}
	if cfg.VLANs != "" {
		set, err := vlan.Parse(string(cfg.VLANs))
		if err != nil {
			return p, fmt.Errorf("vlans: %w", err)
		}
		for _, r := range set.Ranges() {
			p.Tagged = append(p.Tagged, netcli.Range{First: r.First, Last: r.Last})
		}
	}
	p.Disabled = cfg.Disabled
	return p, nil
}

// pushOf names the playbooks/push/ task file that pushes the OS's lines.
func pushOf(dialect netcli.Dialect) string {
	switch {
	case dialect.Shell:
		return "shell"
	case dialect.Module != "":
		return dialect.Module
	}
	return "cli_config"
}

// cliVars are the variables that apply_cli.yaml and check_cli.yaml share.
func cliVars(dialect netcli.Dialect) map[string]any {
	return map[string]any{
		"rackwire_shell": dialect.Shell, "rackwire_reads": dialect.Reads,
		"rackwire_port_pattern": dialect.PortPattern, "rackwire_save": dialect.Save,
		"rackwire_push": pushOf(dialect), "rackwire_legacy_read": dialect.Legacy,
	}
}

func (d *Driver) applyCLI(ctx context.Context, dialect netcli.Dialect, changes []switchdriver.Change) map[string]error {
	results := make(map[string]error, len(changes))
	var ports []netcli.Port
	for _, c := range changes {
		p, err := d.cliPort(c)
		if err != nil {
			results[c.Port] = err
			continue
		}
		ports = append(ports, p)
	}
	if len(ports) == 0 {
		return results
	}
	push := dialect.Render(ports)
	vars := cliVars(dialect)
	vars["rackwire_head"], vars["rackwire_tail"], vars["rackwire_ports"] = nonNil(push.Head), nonNil(push.Tail), len(ports)
	blocks := make([]map[string]any, len(push.Blocks))
	for i, b := range push.Blocks {
		blocks[i] = map[string]any{"port": b.Port, "head": nonNil(b.Head), "lines": b.Lines}
	}
	vars["rackwire_blocks"] = blocks
	vars["ansible_command_timeout"] = commandTimeout(ctx, len(push.Lines(func(string) bool { return true })))
	// cli_config's diff_match "none" pushes the lines as they are where the OS's plugin would
	// diff them against the running configuration (and drop the lines it finds there); the
	// OSes that diff on the box refuse the option.
	if !dialect.OnboxDiff {
		vars["rackwire_diff_match"] = "none"
	}
	report, err := d.run(ctx, "apply_cli.yaml", len(ports), vars)
	if err != nil {
		for _, p := range ports {
			results[p.Name] = err
		}
		return results
	}
	for port, err := range cliOutcome(report, dialect, ports) {
		results[port] = err
	}
	return results
}

// commandTimeout is how long network_cli waits for one command, in seconds: the push and
// the commit that applies it are one command each, so Ansible's default (30 s) is sized to
// the lines they carry (a junos commit of thousands of VLAN objects takes minutes), within
// the run's own limit.
func commandTimeout(ctx context.Context, lines int) int {
	secs := 30 + lines/20
	if deadline, ok := ctx.Deadline(); ok {
		secs = min(secs, max(int(time.Until(deadline).Seconds()), 1))
	}
	return secs
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// cliOutcome reads apply_cli.yaml's report: ports missing from the read fail alone, a push
// that went through succeeded for every port in it, and after a refused push each port has
// the outcome of its own.
func cliOutcome(report map[string]json.RawMessage, dialect netcli.Dialect, ports []netcli.Port) map[string]error {
	var r struct {
		Missing []string `json:"missing"`
		Present []string `json:"present"`
		Pushed  bool     `json:"pushed"`
		// SaveFailed: the push ran but the save after it failed.
		SaveFailed bool   `json:"save_failed"`
		SaveMsg    string `json:"save_msg"`
		Alone      map[string]struct {
			OK  bool   `json:"ok"`
			Msg string `json:"msg"`
		} `json:"alone"`
	}
	out := make(map[string]error, len(ports))
	raw, _ := json.Marshal(report)
	if err := json.Unmarshal(raw, &r); err != nil {
		for _, p := range ports {
			out[p.Name] = fmt.Errorf("the playbook's report is unreadable: %w", err)
		}
		return out
	}
	for _, p := range ports {
		out[p.Name] = fmt.Errorf("the playbook run ended without a result for port %s", p.Name)
	}
	for _, m := range r.Missing {
		out[m] = &TaskError{Task: "rackwire: find the ports", Msg: fmt.Sprintf("port %s does not exist on the switch (not in the output of %q)", m, dialect.Reads[0])}
	}
	for _, port := range r.Present {
		alone, ok := r.Alone[port]
		switch {
		case (r.Pushed || (ok && alone.OK)) && r.SaveFailed:
			out[port] = fmt.Errorf("%w: %q: %s", switchdriver.ErrNotSaved, dialect.Save, r.SaveMsg)
		case r.Pushed || (ok && alone.OK):
			out[port] = nil
		case ok:
			out[port] = &TaskError{Task: "rackwire: push " + port + " alone", Msg: alone.Msg, Cause: causeOf(alone.Msg, false)}
		}
	}
	return out
}

// checkCLI logs in and reads the ports.
func (d *Driver) checkCLI(ctx context.Context, dialect netcli.Dialect) error {
	_, err := d.run(ctx, "check_cli.yaml", 0, cliVars(dialect))
	return err
}
