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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apenella/go-ansible/v2/pkg/execute"
	jsonresults "github.com/apenella/go-ansible/v2/pkg/execute/result/json"
	"github.com/apenella/go-ansible/v2/pkg/playbook"

	"github.com/rackwire/rackwire/internal/switchdriver"
)

// run runs one playbook against the switch and returns its report: the rackwire_report
// fact that the playbook sets last. A run that ends early (the switch unreachable, a task
// failing outside a port's block) is an error naming the task and the switch's message.
func (d *Driver) run(ctx context.Context, name string, ports int, vars map[string]any) (_ map[string]json.RawMessage, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("not started on switch %s: %w", d.target.name, err)
	}
	w, err := newWorkspace(d.config, d.target, vars)
	if err != nil {
		return nil, fmt.Errorf("preparing the playbook run: %w", err)
	}
	defer w.remove()

	cmd := playbook.NewAnsiblePlaybookCmd(
		playbook.WithBinary(d.config.Playbook),
		playbook.WithPlaybooks(filepath.Join(w.playbooks, name)),
		playbook.WithPlaybookOptions(&playbook.AnsiblePlaybookOptions{
			Inventory:     w.inventory,
			ExtraVarsFile: []string{"@" + w.vars},
		}),
	)
	if _, err := exec.LookPath(d.config.Playbook); err != nil {
		return nil, fmt.Errorf("%w: %s cannot be started on this manager (%v); install Ansible and the network-runner role (hack/system-packages.sh) or set --ansible-playbook",
			switchdriver.ErrUnavailable, d.config.Playbook, err)
	}
	if d.slots != nil {
		select {
		case d.slots <- struct{}{}:
			defer func() { <-d.slots }()
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w (%w): the playbook run on switch %s waited for one of the manager's %d ansible-playbook processes past its limit", switchdriver.ErrTimeout, switchdriver.ErrNotStarted, d.target.name, cap(d.slots))
			}
			return nil, fmt.Errorf("not started on switch %s: %w", d.target.name, ctx.Err())
		}
	}
	var stdout, stderr bytes.Buffer
	gx := &groupExec{env: w.env(d.config, d.target), dir: w.dir}
	exe := execute.NewDefaultExecute(
		execute.WithCmd(cmd),
		execute.WithExecutable(gx),
		execute.WithOutput(jsonresults.NewJSONStdoutCallbackResults()),
		execute.WithWrite(&stdout),
		execute.WithWriteError(&stderr),
	)
	start := time.Now()
	runErr := exe.Execute(ctx)
	w.closeMasters()
	defer func() {
		d.config.Log.Info("playbook run", "switch", d.target.name, "playbook", name, "ports", ports,
			"tasks", taskCount(stdout.Bytes()), "seconds", time.Since(start).Seconds(), "error", err)
	}()
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: the playbook run on switch %s did not finish in time and was stopped", switchdriver.ErrTimeout, d.target.name)
		}
		return nil, fmt.Errorf("the playbook run on switch %s was cancelled: %w", d.target.name, ctx.Err())
	}
	report, parseErr := reportOf(stdout.Bytes())
	switch {
	case parseErr == nil:
		return report, nil
	case runErr == nil:
		return nil, parseErr
	default:
		var failed *TaskError
		if errors.As(parseErr, &failed) {
			return nil, parseErr
		}
		return nil, diedEarly(d.config.Playbook, d.target.name, gx.cmd, stderr.String(), stdout.String())
	}
}

// diedEarly explains a run that ended before ansible-playbook printed its JSON report: the
// program dying on its own (a broken installation, a missing role).
func diedEarly(binary, sw string, cmd *exec.Cmd, stderr, stdout string) error {
	status := "ended"
	if cmd != nil && cmd.ProcessState != nil {
		status = "ended with " + cmd.ProcessState.String()
	}
	said := lastLines(stderr, 5)
	if said == "" {
		said = lastLines(stdout, 5)
	}
	if said == "" {
		said = "it printed nothing"
	}
	return fmt.Errorf("ansible-playbook (%s) for switch %s %s before printing its report: %s", binary, sw, status, said)
}

// reportOf finds the playbook's rackwire_report fact in the JSON callback's output, or
// the task that stopped the run before it.
func reportOf(out []byte) (map[string]json.RawMessage, error) {
	var results struct {
		Plays []struct {
			Tasks []struct {
				Task  struct{ Name string } `json:"task"`
				Hosts map[string]struct {
					Failed      bool            `json:"failed"`
					Unreachable bool            `json:"unreachable"`
					Msg         json.RawMessage `json:"msg"`
					Stderr      string          `json:"stderr"`
					Results     []struct {
						Failed bool            `json:"failed"`
						Msg    json.RawMessage `json:"msg"`
						Stderr string          `json:"stderr"`
					} `json:"results"`
					Facts struct {
						Report map[string]json.RawMessage `json:"rackwire_report"`
					} `json:"ansible_facts"`
				} `json:"hosts"`
			} `json:"tasks"`
		} `json:"plays"`
	}
	// Warnings may precede the JSON document on stdout.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &results); err != nil {
		return nil, fmt.Errorf("the playbook's output is not the JSON callback's: %w", err)
	}
	// A port's failure rescued by its block shows as a failed task too: only a run
	// without a report failed as a whole, and its last failed task says why.
	var stop error
	for _, p := range results.Plays {
		for _, t := range p.Tasks {
			for _, h := range t.Hosts {
				switch {
				case h.Facts.Report != nil:
					return h.Facts.Report, nil
				case h.Unreachable:
					msg := message(h.Msg)
					stop = &TaskError{Msg: "switch unreachable: " + msg, Cause: causeOf(msg, true)}
				case h.Failed:
					msg, stderr := message(h.Msg), h.Stderr
					// A loop's message only says that an item failed: the first failed item says why.
					for _, r := range h.Results {
						if r.Failed {
							msg, stderr = message(r.Msg), r.Stderr
							break
						}
					}
					stop = &TaskError{Task: t.Task.Name, Msg: joinMessages(msg, stderr), Cause: causeOf(msg, false)}
				}
			}
		}
	}
	if stop != nil {
		return nil, stop
	}
	return nil, errors.New("the playbook ended without a report")
}

// taskCount is how many tasks a run executed, as its JSON callback lists them: the cost of a
// run grows with it, not with the ports (test/bench/switches).
func taskCount(out []byte) int {
	var results struct {
		Plays []struct {
			Tasks []json.RawMessage `json:"tasks"`
		} `json:"plays"`
	}
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	if json.Unmarshal(out, &results) != nil {
		return 0
	}
	n := 0
	for _, p := range results.Plays {
		n += len(p.Tasks)
	}
	return n
}

// message renders a task's msg, which Ansible gives as a string or any JSON value.
func message(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	return string(raw)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// workspace is the private directory of one run.
type workspace struct {
	dir, home, playbooks, inventory, vars, knownHosts string
}

func newWorkspace(c Config, t target, vars map[string]any) (w *workspace, err error) {
	dir, err := os.MkdirTemp(c.WorkDir, runDirPrefix+instance()+"-")
	if err != nil {
		return nil, err
	}
	w = &workspace{
		dir: dir, home: filepath.Join(dir, "home"), playbooks: filepath.Join(dir, "playbooks"),
		inventory: filepath.Join(dir, "inventory.yaml"), vars: filepath.Join(dir, "vars.json"),
	}
	w.knownHosts = filepath.Join(w.home, ".ssh", "known_hosts")
	defer func() {
		if err != nil {
			w.remove()
		}
	}()
	if err := os.CopyFS(w.playbooks, c.Playbooks); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(w.knownHosts), 0o700); err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
		return nil, err
	}
	var known strings.Builder
	for _, k := range t.hostKeys {
		fmt.Fprintf(&known, "%s %s\n", t.knownHostsPattern(), k)
	}
	if err := writePrivate(w.knownHosts, []byte(known.String())); err != nil {
		return nil, err
	}
	// An empty configuration file: no ansible.cfg of the machine or the working directory
	// changes how the switch is driven.
	if err := writePrivate(filepath.Join(dir, "ansible.cfg"), []byte("[defaults]\n")); err != nil {
		return nil, err
	}
	vars = maps.Clone(vars)
	for k, v := range vars {
		if text, ok := v.(scriptFile); ok {
			path := filepath.Join(dir, k+".sh")
			if err := writePrivate(path, []byte(text)); err != nil {
				return nil, err
			}
			vars[k] = path
		}
	}
	b, err := json.Marshal(vars)
	if err != nil {
		return nil, err
	}
	if err := writePrivate(w.vars, b); err != nil {
		return nil, err
	}
	inv, err := w.inventoryOf(t)
	if err != nil {
		return nil, err
	}
	return w, writePrivate(w.inventory, inv)
}

func (w *workspace) remove() { _ = os.RemoveAll(w.dir) }

// masterLinger is how long an idle SSH master would outlive its run if closeMasters failed.
const masterLinger = 30 * time.Second

func (w *workspace) controlDir() string { return filepath.Join(w.dir, "cp") }

// closeMasters ends the connections that outlive the run's process group: the SSH masters
// (ssh -O exit for each control socket) and network_cli's persistent connection daemon
// (ansible-connection, which detaches into a session of its own). Whatever still runs with
// the run's directory in its command line or its environment (ANSIBLE_PERSISTENT_CONTROL_PATH_DIR,
// HOME) is then killed, so a cancelled or timed-out run leaves nothing behind.
func (w *workspace) closeMasters() {
	sockets, _ := filepath.Glob(filepath.Join(w.controlDir(), "*"))
	for _, s := range sockets {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = exec.CommandContext(ctx, "ssh", "-o", "ControlPath="+s, "-O", "exit", "switch").Run()
		cancel()
	}
	for _, pid := range processesOf(w.dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// processesOf lists the processes whose command line or environment names a path under dir.
func processesOf(dir string) []int {
	mark := []byte(dir + "/")
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == os.Getpid() {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join(p, f)); err == nil && bytes.Contains(b, mark) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// writePrivate creates a file only the manager's user can read.
func writePrivate(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// inventoryOf writes the one-host inventory. Every value is a JSON string (valid YAML)
// tagged !unsafe, so Ansible never templates a password that happens to contain "{{".
func (w *workspace) inventoryOf(t target) ([]byte, error) {
	hostVars := [][2]string{
		{"ansible_host", t.host},
		{"ansible_port", strconv.Itoa(int(t.port))},
		{"ansible_user", t.user},
		{"ansible_connection", t.connection()},
		{"ansible_network_os", t.os},
		{"ansible_python_interpreter", "auto_silent"},
	}
	if t.bridge != "" {
		hostVars = append(hostVars, [2]string{"bridge_name", t.bridge})
	}
	if t.password != "" {
		hostVars = append(hostVars, [2]string{"ansible_password", t.password})
	}
	if t.enable != "" {
		hostVars = append(hostVars, [2]string{"ansible_become", "true"}, [2]string{"ansible_become_method", "enable"},
			[2]string{"ansible_become_password", t.enable})
	}
	if len(t.privateKey) > 0 {
		key := filepath.Join(w.dir, "id")
		if err := writePrivate(key, t.privateKey); err != nil {
			return nil, err
		}
		hostVars = append(hostVars, [2]string{"ansible_ssh_private_key_file", key})
	}
	var b strings.Builder
	b.WriteString("all:\n  hosts:\n    switch:\n")
	for _, kv := range hostVars {
		v, err := json.Marshal(kv[1])
		if err != nil {
			return nil, err
		}
		tag := "!unsafe "
		if kv[0] == "ansible_port" || kv[0] == "ansible_become" {
			tag, v = "", []byte(kv[1])
		}
		fmt.Fprintf(&b, "      %s: %s%s\n", kv[0], tag, v)
	}
	return []byte(b.String()), nil
}

// env is the run's whole environment, built from scratch: nothing secret, and nothing of the
// manager's own (no ANSIBLE_* variable, home or Ansible configuration of the manager reaches
// the run; HOME is the run's directory, which holds the known hosts). PATH is the one value
// taken over, so that ansible-playbook finds ssh and its Python as the manager found it.
func (w *workspace) env(c Config, t target) []string {
	// One SSH connection for the whole run: a login per task was most of a run's time
	// (test/bench). The master leaves the process group, so closeMasters ends it.
	sshArgs := "-o ControlMaster=auto -o ControlPersist=" + strconv.Itoa(int(masterLinger.Seconds())) + "s -o GlobalKnownHostsFile=/dev/null "
	hostKeyChecking := "True"
	if t.insecure {
		sshArgs += "-o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no"
		hostKeyChecking = "False"
	} else {
		sshArgs += "-o UserKnownHostsFile=" + w.knownHosts + " -o StrictHostKeyChecking=yes"
	}
	vars := map[string]string{
		"HOME":                                w.home,
		"ANSIBLE_CONFIG":                      filepath.Join(w.dir, "ansible.cfg"),
		"ANSIBLE_STDOUT_CALLBACK":             "json",
		"ANSIBLE_ROLES_PATH":                  c.RolesPath,
		"ANSIBLE_HOST_KEY_CHECKING":           hostKeyChecking,
		"ANSIBLE_SSH_ARGS":                    sshArgs,
		"ANSIBLE_PIPELINING":                  "True",
		"ANSIBLE_TIMEOUT":                     strconv.Itoa(int(c.ConnectTimeout.Seconds())),
		"ANSIBLE_PERSISTENT_CONNECT_TIMEOUT":  strconv.Itoa(int(c.ConnectTimeout.Seconds())),
		"ANSIBLE_RETRY_FILES_ENABLED":         "False",
		"ANSIBLE_LOCAL_TEMP":                  filepath.Join(w.dir, "tmp"),
		"ANSIBLE_PERSISTENT_CONTROL_PATH_DIR": filepath.Join(w.dir, "pc"),
		"ANSIBLE_SSH_CONTROL_PATH_DIR":        w.controlDir(),
		"ANSIBLE_SSH_USETTY":                  "False",
		"ANSIBLE_NOCOLOR":                     "1",
		"ANSIBLE_DEPRECATION_WARNINGS":        "False",
		"ANSIBLE_PARAMIKO_LOOK_FOR_KEYS":      "False",
		"PATH":                                pathOf(),
		"LANG":                                "C.UTF-8",
		"LC_ALL":                              "C.UTF-8",
		"TMPDIR":                              filepath.Join(w.dir, "tmp"),
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func pathOf() string {
	if p := os.Getenv("PATH"); p != "" {
		return p
	}
	return "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
}
