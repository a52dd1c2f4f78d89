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
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"
)

func shellSwitch(t *testing.T) *Switch {
	t.Helper()
	s, err := Start(Options{OS: "cumulus", User: "cumulus", Password: "pw", Ports: []string{"swp1", "swp2", "swp3"}, Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func dial(t *testing.T, s *Switch) *ssh.Client {
	t.Helper()
	c, err := ssh.Dial("tcp", fmt.Sprintf("%s:%d", s.Host, s.Port), &ssh.ClientConfig{
		User: "cumulus", Auth: []ssh.AuthMethod{ssh.Password("pw")},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), //nolint:gosec // a test's own server on loopback
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// run sends one exec request, as Ansible's ssh connection does, and returns its outputs and
// exit status.
func run(t *testing.T, c *ssh.Client, stdin, line string) (string, string, int) {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	var out, errOut bytes.Buffer
	sess.Stdout, sess.Stderr, sess.Stdin = &out, &errOut, strings.NewReader(stdin)
	err = sess.Run(line)
	var exit *ssh.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.ExitStatus()
	}
	t.Fatalf("%s: %v", line, err)
	return "", "", 0
}

// NCLU's pending change: edits wait for "net commit" (by the absolute path the nclu module
// uses as well as through PATH), "net abort" drops them, "net pending" shows what committing
// would change, and the commit lands in the model.
func TestShellNetKeepsNCLUSemantics(t *testing.T) {
	s := shellSwitch(t)
	c := dial(t, s)

	if out, stderr, code := run(t, c, "", "net add bridge bridge ports swp1 && net add interface swp1 bridge access 10 && /usr/bin/net pending"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	} else {
		for _, want := range []string{"+bridge bridge-ports swp1", "+swp1 bridge-access 10", pendingMark, "net add interface swp1 bridge access 10"} {
			if !strings.Contains(out, want) {
				t.Errorf("net pending lacks %q:\n%s", want, out)
			}
		}
	}
	if got := s.PortState("swp1"); got.Bridged || got.Untagged != 0 {
		t.Errorf("swp1 before the commit: %+v, want it untouched", got)
	}
	if _, stderr, code := run(t, c, "", "/usr/bin/net commit description 'Ansible-originated commit'"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, stderr)
	}
	if got := s.PortState("swp1"); !got.Bridged || got.Untagged != 10 || len(got.Tagged) != 0 {
		t.Errorf("swp1 after the commit: %+v, want a bridge port of VLAN 10", got)
	}
	if out, _, _ := run(t, c, "", "net pending"); out != "" {
		t.Errorf("net pending after the commit: %q, want nothing", out)
	}
	if out, _, _ := run(t, c, "", "net show commit last"); !strings.Contains(out, "+swp1 bridge-access 10") {
		t.Errorf("net show commit last: %q, want the commit's diff", out)
	}

	// Edits that change nothing leave the diff empty: the nclu module then does not commit.
	if out, _, _ := run(t, c, "", "net add bridge bridge ports swp1 && net pending"); strings.Contains(out, "+") || !strings.Contains(out, pendingMark) {
		t.Errorf("net pending of an edit that changes nothing:\n%s", out)
	}

	run(t, c, "", "net add bridge bridge ports swp2 && net add interface swp2 bridge access 20")
	if _, stderr, code := run(t, c, "", "net abort && net commit"); code != 0 {
		t.Fatalf("abort: exit %d: %s", code, stderr)
	}
	if got := s.PortState("swp2"); got.Bridged {
		t.Errorf("swp2 after net abort and net commit: %+v, want the aborted edits gone", got)
	}

	// A port the switch lacks is refused; the command line stops there.
	out, stderr, code := run(t, c, "", "net add interface swp9 bridge access 5 && echo went-on")
	if code == 0 || !strings.Contains(stderr, "swp9 is not an interface") || strings.Contains(out, "went-on") {
		t.Errorf("net on a missing port: exit %d, stdout %q, stderr %q", code, out, stderr)
	}

	// A commit NCLU refuses fails with an error the nclu module recognises.
	if _, stderr, code := run(t, c, "", "net add interface swp2 bridge vids 5000 && net commit"); code == 0 || !strings.Contains(stderr, "ERROR") {
		t.Errorf("a commit of VLAN 5000: exit %d, stderr %q, want an ERROR", code, stderr)
	}

	// A trunk without bridge-vids or bridge-pvid carries the bridge's VLANs, pvid 1 untagged.
	run(t, c, "", "net add vlan 30 && net add vlan 31 && net add bridge bridge ports swp3 && net commit")
	if got := s.PortState("swp3"); !got.Bridged || got.Untagged != 1 || !slices.Equal(got.Tagged, []int{30, 31}) {
		t.Errorf("swp3, a bridge port with no VLAN settings: %+v, want untagged 1, tagged 30-31", got)
	}

	want := []string{"net add interface swp9 bridge access 5", "net show commit last"}
	for _, w := range want {
		if !slices.Contains(s.Commands(), w) {
			t.Errorf("the switch did not record %q: %q", w, s.Commands())
		}
	}
}

// The shell is a Linux shell: the ports are its links, the client's input reaches the
// command (Ansible pipes modules to Python), and the fake /usr/bin/net never reaches the
// machine the test runs on.
func TestShellIsALinuxShellOfItsOwn(t *testing.T) {
	_, hostErr := os.Lstat("/usr/bin/net")
	s := shellSwitch(t)
	c := dial(t, s)
	out, stderr, code := run(t, c, "", "ip -o link show")
	if code != 0 || !strings.Contains(out, "2: swp1:") || !strings.Contains(out, "4: swp3:") {
		t.Errorf("ip -o link show: exit %d, %q %q", code, out, stderr)
	}
	if out, _, _ := run(t, c, "hello switch\n", "read line && echo \"got $line\""); out != "got hello switch\n" {
		t.Errorf("stdin: %q", out)
	}
	if out, _, code := run(t, c, "", "exit 7"); code != 7 || out != "" {
		t.Errorf("exit 7: exit %d, %q", code, out)
	}
	if _, err := os.Lstat("/usr/bin/net"); (err == nil) != (hostErr == nil) {
		t.Errorf("/usr/bin/net on the host changed while the switch ran (before: %v, now: %v)", hostErr, err)
	}
}

// Close kills what still runs in the switch's shell and removes its home.
func TestShellCloseLeavesNothing(t *testing.T) {
	s, err := Start(Options{OS: "cumulus", User: "cumulus", Password: "pw", Ports: []string{"swp1"}, Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	home := s.shellHost.home
	c := dial(t, s)
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("echo $$; exec sleep 600"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("pid %q: %v", line, err)
	}
	s.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the shell's command %d still runs after Close (kill 0: %v)", pid, err)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("the switch's home %s is still there after Close: %v", home, err)
	}
}

func TestShellOnlyForCumulus(t *testing.T) {
	if _, err := Start(Options{OS: "eos", Ports: []string{"Ethernet1"}, Shell: true}); err == nil || !strings.Contains(err.Error(), "cumulus") {
		t.Errorf("Start(eos, Shell): %v, want a refusal naming cumulus", err)
	}
}
