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

// Package switchlab starts the loopback switch of the tests and the benchmark (Open vSwitch
// reached over SSH, see hack/switch-lab.sh) and looks at it directly with ovs-vsctl.
package switchlab

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Lab is a running switch lab.
type Lab struct {
	Dir  string
	Host string
	// Hosts are the loopback addresses the lab's sshd answers on: a Switch per address
	// stands for a device of its own (rackwire allows one Switch per device).
	Hosts    []string
	Port     int32
	User     string
	Password string
	HostKey  string
	Bridge   string
	// AuthorizedKeys is the lab user's authorized_keys file, for key logins.
	AuthorizedKeys string
	script         string
}

// Start runs hack/switch-lab.sh (found from the repository root) with ports p0..p<ports-1>,
// in a directory of its own that Stop removes. The lab's daemons run as the lab user, so
// the directory sits right under the system's temporary directory, where that user can
// reach it (a test's TempDir is in a directory only root may enter).
func Start(root string, ports int) (*Lab, error) {
	dir, err := os.MkdirTemp("", "rackwire-lab-")
	if err != nil {
		return nil, err
	}
	return StartIn(root, dir, ports)
}

// StartIn is Start in a directory of the caller's choice, which the lab user must be able to
// reach. The script first stops whatever a previous start left in it, so a fixed directory
// (make dev's) recovers from a crashed run.
func StartIn(root, dir string, ports int) (*Lab, error) {
	sshPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	script := filepath.Join(root, "hack", "switch-lab.sh")
	cmd := exec.Command(script, "start", dir, strconv.Itoa(sshPort), strconv.Itoa(ports))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		_ = exec.Command(script, "stop", dir).Run()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s start: %w\n%s", script, err, stderr.String())
	}
	vals := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vals[k] = v
		}
	}
	l := &Lab{
		Dir: vals["OVS_RUNDIR"], Host: vals["SSH_HOST"], Hosts: strings.Fields(vals["SSH_HOSTS"]), Port: int32(sshPort), User: vals["SSH_USER"],
		Password: vals["SSH_PASSWORD"], HostKey: vals["SSH_HOST_KEY"], Bridge: vals["BRIDGE"],
		AuthorizedKeys: vals["AUTHORIZED_KEYS"], script: script,
	}
	if l.Password == "" || l.HostKey == "" || l.Bridge == "" {
		return nil, fmt.Errorf("%s start printed %q", script, out)
	}
	return l, l.waitSSH()
}

// Stop stops the lab's daemons and removes its directory.
func (l *Lab) Stop() error {
	out, err := exec.Command(l.script, "stop", l.Dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s stop: %w: %s", l.script, err, out)
	}
	return os.RemoveAll(l.Dir)
}

func (l *Lab) waitSSH() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))), time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sshd of the lab does not listen: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Vsctl runs ovs-vsctl on the lab's switch, as an operator at the console would.
func (l *Lab) Vsctl(args ...string) (string, error) {
	return l.run("ovs-vsctl", append([]string{"--timeout=10"}, args...)...)
}

// Trace asks the lab's switch where a frame entering it would go (ovs-appctl ofproto/trace)
// and returns the names of the ports it would leave on.
func (l *Lab) Trace(flow string) ([]string, error) {
	ctl := filepath.Join(l.Dir, "ovs-vswitchd.ctl")
	out, err := l.run("ovs-appctl", "-t", ctl, "ofproto/trace", l.Bridge, flow)
	if err != nil {
		return nil, err
	}
	show, err := l.run("ovs-appctl", "-t", ctl, "dpif/show")
	if err != nil {
		return nil, err
	}
	// dpif/show lines read "p0 3/4: (dummy)": name, OpenFlow port, datapath port.
	names := map[string]string{}
	for _, line := range strings.Split(show, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if _, dp, ok := strings.Cut(strings.TrimSuffix(f[1], ":"), "/"); ok {
			names[dp] = f[0]
		}
	}
	var ports []string
	for _, line := range strings.Split(out, "\n") {
		actions, ok := strings.CutPrefix(strings.TrimSpace(line), "Datapath actions:")
		if !ok {
			continue
		}
		ports = nil
		for _, a := range strings.Split(actions, ",") {
			if name, ok := names[strings.TrimSpace(a)]; ok {
				ports = append(ports, name)
			}
		}
	}
	return ports, nil
}

// Ofctl runs ovs-ofctl on the lab's switch.
func (l *Lab) Ofctl(args ...string) (string, error) {
	return l.run("ovs-ofctl", append([]string{"--timeout=10"}, args...)...)
}

func (l *Lab) run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+l.Dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// Get reads one column of a row, e.g. Get("Port", "p1", "tag").
func (l *Lab) Get(table, record, column string) (string, error) {
	return l.Vsctl("get", table, record, column)
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// HungSwitch accepts SSH connections and never answers, like a switch whose control
// plane is wedged. Close stops it and drops the connections.
type HungSwitch struct {
	ln    net.Listener
	conns chan net.Conn
}

// StartHungSwitch listens on a free loopback port.
func StartHungSwitch() (*HungSwitch, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &HungSwitch{ln: ln, conns: make(chan net.Conn, 1024)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case h.conns <- c:
			default:
				_ = c.Close()
			}
		}
	}()
	return h, nil
}

// Port is the port it listens on.
func (h *HungSwitch) Port() int32 { return int32(h.ln.Addr().(*net.TCPAddr).Port) }

// Close stops listening and closes every connection it held.
func (h *HungSwitch) Close() {
	_ = h.ln.Close()
	for {
		select {
		case c := <-h.conns:
			_ = c.Close()
		default:
			return
		}
	}
}
