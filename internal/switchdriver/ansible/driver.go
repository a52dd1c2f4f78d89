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
	"io/fs"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/netcli"
	"github.com/rackwire/rackwire/internal/switchdriver"
	"github.com/rackwire/rackwire/playbooks"
)

// Config is how the manager runs Ansible; the zero value is production.
type Config struct {
	// Playbook is the ansible-playbook binary.
	Playbook string
	// RolesPath is where the network-runner role is installed.
	RolesPath string
	// WorkDir holds the per-run temporary directories; empty for the system default.
	WorkDir string
	// ConnectTimeout bounds Ansible's connection to the switch, so an unreachable switch
	// fails well before the run's own limit.
	ConnectTimeout time.Duration
	// Playbooks are the playbooks and provider overrides; tests may swap them.
	Playbooks fs.FS
	// MaxProcesses bounds the ansible-playbook processes that run at once, across every
	// switch of the manager: each costs tens of MB, and at start-up every switch's ports are
	// read at once. A run waits for a slot within its own limit. 0 means 8.
	MaxProcesses int
	// Log gets one line per playbook run (switch, playbook, ports, duration, outcome):
	// how many runs a burst of port changes took is the batching's measure.
	Log logr.Logger
}

func (c Config) withDefaults() Config {
	if c.Playbook == "" {
		c.Playbook = "ansible-playbook"
	}
	if c.RolesPath == "" {
		c.RolesPath = "/etc/ansible/roles"
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.Playbooks == nil {
		c.Playbooks = playbooks.FS
	}
	if c.MaxProcesses <= 0 {
		c.MaxProcesses = 8
	}
	return c
}

// Factory returns the switchdriver.Factory of Ansible switches.
func Factory(c Config) switchdriver.Factory {
	c = c.withDefaults()
	// One set of slots for every driver the factory builds: the manager's whole budget.
	slots := make(chan struct{}, c.MaxProcesses)
	return func(a *networkv1alpha1.AnsibleSwitch, s *corev1.Secret) (switchdriver.Driver, error) {
		t, err := targetOf(a, s)
		if err != nil {
			return nil, err
		}
		return &Driver{config: c, target: t, slots: slots}, nil
	}
}

// Driver drives one switch; see switchdriver.Driver.
type Driver struct {
	config Config
	target target
	// slots are the factory's ansible-playbook processes; nil for no bound.
	slots chan struct{}
}

// Apply implements switchdriver.Driver: one playbook run for every change it can make.
// A change the switch's OS cannot carry (ACLs where no playbook programs them) fails on
// its own, before the run, with a message that says so.
func (d *Driver) Apply(ctx context.Context, changes []switchdriver.Change) map[string]error {
	if dialect, ok := netcli.Lookup(d.target.os); ok {
		return d.applyCLI(ctx, dialect, changes)
	}
	results := make(map[string]error, len(changes))
	var ports []portVars
	for _, c := range changes {
		v, err := d.varsOf(c)
		if err != nil {
			results[c.Port] = err
			continue
		}
		ports = append(ports, v)
	}
	if len(ports) == 0 {
		return results
	}
	playbook, vars := "apply.yaml", map[string]any{"rackwire_changes": ports}
	if render := batchOS[d.target.os]; render != nil {
		playbook, vars = "apply_batch.yaml", batchVars(render(d.target.bridge, ports), len(ports))
	}
	report, err := d.run(ctx, playbook, len(ports), vars)
	for _, p := range ports {
		if err != nil {
			results[p.Port] = err
			continue
		}
		results[p.Port] = portOutcome(report, p.Port)
	}
	return results
}

// portOutcome reads one port's entry of an apply report.
func portOutcome(report map[string]json.RawMessage, port string) error {
	raw, ok := report[port]
	if !ok {
		return fmt.Errorf("the playbook run ended without a result for port %s", port)
	}
	var r struct {
		OK     bool   `json:"ok"`
		Task   string `json:"task"`
		Msg    string `json:"msg"`
		Stderr string `json:"stderr"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("the playbook's result for port %s is unreadable: %w", port, err)
	}
	if r.OK {
		return nil
	}
	return &TaskError{Task: r.Task, Msg: joinMessages(r.Msg, r.Stderr), Cause: causeOf(r.Msg, false)}
}

// Read implements switchdriver.Driver. With no ports it checks the switch: the provider's
// own check where rackwire ships one (openvswitch), else a read of the ports through the OS's
// command line (internal/netcli), which also proves the login and the enable secret.
func (d *Driver) Read(ctx context.Context, ports []string) (map[string]*networkv1alpha1.SwitchPortConfigurationSpec, error) {
	if len(ports) == 0 {
		if dialect, ok := netcli.Lookup(d.target.os); ok {
			return nil, d.checkCLI(ctx, dialect)
		}
		if !d.supports(actionCheck) {
			return nil, fmt.Errorf("%w: os %s has neither a check playbook nor a command-line dialect", ErrUnsupported, d.target.os)
		}
		_, err := d.run(ctx, "check.yaml", 0, map[string]any{"rackwire_check_action": actionCheck})
		return nil, err
	}
	reader := readers[d.target.os]
	if reader == nil || !d.supports(actionReadPort) {
		return nil, fmt.Errorf("%w: os %s has no read_ports playbook, so its ports cannot be read back for drift", ErrUnsupported, d.target.os)
	}
	report, err := d.run(ctx, "read.yaml", len(ports), map[string]any{"rackwire_ports": ports})
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(report)
	if err != nil {
		return nil, err
	}
	return reader(raw, ports)
}

// ErrUnsupported marks a feature that rackwire's playbooks cannot apply on a switch's OS.
var ErrUnsupported = switchdriver.ErrUnsupported

// TaskError is the failure of one playbook task, as the switch reported it. Cause is one
// of switchdriver's errors when the message says what went wrong.
type TaskError struct {
	Task  string
	Msg   string
	Cause error
}

func (e *TaskError) Unwrap() error { return e.Cause }

// causeOf recognises the messages of a refused login (ssh with sshpass, paramiko) and of
// a switch that cannot be reached; unreachable says whether Ansible marked the host so.
func causeOf(msg string, unreachable bool) error {
	lower := strings.ToLower(msg)
	for _, m := range []string{"invalid/incorrect password", "permission denied", "authentication failed", "incorrect password"} {
		if strings.Contains(lower, m) {
			return switchdriver.ErrAuthentication
		}
	}
	if unreachable {
		return switchdriver.ErrUnreachable
	}
	return nil
}

func (e *TaskError) Error() string {
	if e.Task == "" {
		return e.Msg
	}
	return fmt.Sprintf("task %q failed: %s", e.Task, e.Msg)
}

func joinMessages(msg, stderr string) string {
	switch {
	case stderr == "" || stderr == msg:
		return msg
	case msg == "" || strings.HasPrefix(msg, "non-zero return code"):
		return stderr
	default:
		return msg + ": " + stderr
	}
}
