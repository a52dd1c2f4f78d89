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

// A Cumulus switch in Shell mode runs what Ansible sends as a Linux switch's sshd would: with
// /bin/sh, so that the nclu module (Python that Ansible pipes to the switch's interpreter)
// runs unmodified, as network-runner's cumulus provider uses it. Its `net` is this package,
// answering from the switch's one NCLU model.
//
// Why a shell of this process and not a real sshd (openssh-server on loopback): the switch's
// state stays in one model, read by PortState as for every other OS, and nothing outlives the
// test but what Close kills. Why a mount namespace: the nclu module runs "/usr/bin/net" by its
// absolute path, so PATH cannot reach a fake; each command runs in a private mount namespace
// (a user namespace too when not root) whose /usr/bin is a read-only overlay of the switch's
// own bin directory on the real /usr/bin, which the host never sees.
//
// `net` and `ip` are the running binary itself (a test binary importing this package),
// re-executed: init below answers before any test starts, through a unix socket of the switch.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"
)

const (
	// envSocket names the switch's socket to a `net` or `ip` started by a Shell-mode command.
	envSocket = "FAKESWITCH_NCLU_SOCKET"
	// envEnter marks the process that sets up the mount namespace and becomes /bin/sh.
	envEnter = "FAKESWITCH_NCLU_ENTER"
	// envLower is the directory laid over /usr/bin.
	envLower = "FAKESWITCH_NCLU_LOWER"
)

// shellCommands are the switch's commands that the binary answers when run under their name.
var shellCommands = []string{"net", "ip"}

func init() {
	if os.Getenv(envSocket) == "" {
		return
	}
	if os.Getenv(envEnter) != "" {
		os.Exit(enter())
	}
	if slices.Contains(shellCommands, filepath.Base(os.Args[0])) {
		os.Exit(forward(os.Getenv(envSocket), filepath.Base(os.Args[0]), os.Args[1:]))
	}
}

// enter runs in the new mount namespace: it makes every mount private (so nothing it mounts
// reaches the host), lays the switch's bin directory over /usr/bin and becomes /bin/sh -c.
func enter() int {
	lower := os.Getenv(envLower)
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "fakeswitch: %s: %v\n", what, err)
		return 126
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fail("making the mounts private", err)
	}
	if err := syscall.Mount("overlay", "/usr/bin", "overlay", syscall.MS_RDONLY, "lowerdir="+lower+":/usr/bin"); err != nil {
		return fail("laying "+lower+" over /usr/bin", err)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, envEnter+"=") && !strings.HasPrefix(e, envLower+"=") {
			env = append(env, e)
		}
	}
	if err := syscall.Exec("/bin/sh", append([]string{"sh"}, os.Args[1:]...), env); err != nil {
		return fail("starting /bin/sh", err)
	}
	return 0
}

// request and reply travel over the switch's socket, one of each per connection.
type request struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
}

type reply struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	Status int    `json:"status"`
}

// forward asks the switch to run one command and prints its answer.
func forward(socket, name string, args []string) int {
	c, err := net.Dial("unix", socket)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: the switch does not answer: %v\n", name, err)
		return 1
	}
	defer func() { _ = c.Close() }()
	if err := json.NewEncoder(c).Encode(request{Name: name, Args: args}); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	var r reply
	if err := json.NewDecoder(c).Decode(&r); err != nil {
		fmt.Fprintf(os.Stderr, "%s: no answer from the switch: %v\n", name, err)
		return 1
	}
	_, _ = io.WriteString(os.Stdout, r.Stdout)
	_, _ = io.WriteString(os.Stderr, r.Stderr)
	return r.Status
}

// shellHost is what a Shell-mode switch holds besides the model: its home, its socket and the
// commands running in it.
type shellHost struct {
	self              string // this binary: sh's parent, net and ip
	home, bin, socket string
	listener          net.Listener
	mu                sync.Mutex
	running           map[*exec.Cmd]bool
	commands          sync.WaitGroup // the running commands, until reaped
}

// startShell prepares the switch's home (bin/net and bin/ip are this binary) and listens on
// its socket.
func (s *Switch) startShell() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "fakeswitch-nclu-")
	if err != nil {
		return err
	}
	h := &shellHost{self: self, home: home, bin: filepath.Join(home, "bin"), socket: filepath.Join(home, "s"), running: map[*exec.Cmd]bool{}}
	if len(h.socket) > 100 { // a unix socket's path has at most 107 bytes
		_ = os.RemoveAll(home)
		if home, err = os.MkdirTemp("/tmp", "fakeswitch-nclu-"); err != nil {
			return err
		}
		h.home, h.bin, h.socket = home, filepath.Join(home, "bin"), filepath.Join(home, "s")
	}
	if err := os.Mkdir(h.bin, 0o755); err != nil {
		_ = os.RemoveAll(home)
		return err
	}
	for _, name := range shellCommands {
		if err := os.Symlink(self, filepath.Join(h.bin, name)); err != nil {
			_ = os.RemoveAll(home)
			return err
		}
	}
	if h.listener, err = net.Listen("unix", h.socket); err != nil {
		_ = os.RemoveAll(home)
		return err
	}
	s.shellHost = h
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := h.listener.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.answer(c)
			}()
		}
	}()
	if err := shellProbe(h); err != nil {
		s.stopShell()
		return err
	}
	return nil
}

var (
	probeOnce sync.Once
	probeErr  error
)

// shellProbe checks once that this machine lets the switch enter a mount namespace and lay
// its bin over /usr/bin: a switch that cannot is refused at Start, not in the middle of a run.
func shellProbe(h *shellHost) error {
	probeOnce.Do(func() {
		out, err := h.command("test -L /usr/bin/net && test -x /usr/bin/net").CombinedOutput()
		if err != nil {
			probeErr = fmt.Errorf("fakeswitch: a Shell-mode switch needs a private mount namespace with an overlay on /usr/bin (root, or user namespaces): %v: %s", err, strings.TrimSpace(string(out)))
		}
	})
	return probeErr
}

// command is one command line run as the switch's sshd would: /bin/sh -c in the switch's
// home, here in a mount namespace of its own.
func (h *shellHost) command(line string) *exec.Cmd {
	cmd := exec.Command(h.self, "-c", line)
	cmd.Dir = h.home
	cmd.Env = []string{
		envSocket + "=" + h.socket, envEnter + "=1", envLower + "=" + h.bin,
		"HOME=" + h.home, "USER=cumulus", "LOGNAME=cumulus", "SHELL=/bin/sh",
		"PATH=" + h.bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"TMPDIR=" + h.home, "LANG=C.UTF-8",
	}
	attr := &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWNS}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	cmd.SysProcAttr = attr
	return cmd
}

// shellExec runs an exec request's command with the channel as its standard streams.
func (s *Switch) shellExec(ch ssh.Channel, line string) uint32 {
	h := s.shellHost
	cmd := h.command(line)
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 255
	}
	h.mu.Lock()
	if h.running == nil { // stopped
		h.mu.Unlock()
		return 255
	}
	if err := cmd.Start(); err != nil {
		h.mu.Unlock()
		_, _ = fmt.Fprintf(ch.Stderr(), "fakeswitch: %v\n", err)
		return 255
	}
	h.running[cmd] = true
	h.commands.Add(1)
	h.mu.Unlock()
	// The client's input (a pipelined module) goes in as it comes; the command may end without
	// reading it all, and Wait closes the pipe then.
	go func() {
		_, _ = io.Copy(stdin, ch)
		_ = stdin.Close()
	}()
	err = cmd.Wait()
	h.mu.Lock()
	delete(h.running, cmd)
	h.mu.Unlock()
	h.commands.Done()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return uint32(exit.ExitCode())
	}
	return 255
}

// answer runs one `net` or `ip` of a Shell-mode command against the model.
func (s *Switch) answer(c net.Conn) {
	defer func() { _ = c.Close() }()
	var r request
	if err := json.NewDecoder(c).Decode(&r); err != nil {
		return
	}
	line := strings.TrimSpace(r.Name + " " + strings.Join(r.Args, " "))
	s.record(line)
	if s.opts.Hang != "" && strings.HasPrefix(line, s.opts.Hang) {
		<-s.done
		return
	}
	out, errText := cumulusCommand(s, line)
	rep := reply{Stdout: out}
	if errText != "" {
		rep.Stderr, rep.Status = errText+"\n", 1
	}
	_ = json.NewEncoder(c).Encode(rep)
}

// stopShell kills what still runs in the switch's shell and removes its home.
func (s *Switch) stopShell() {
	h := s.shellHost
	if h == nil {
		return
	}
	_ = h.listener.Close()
	h.mu.Lock()
	for cmd := range h.running {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	h.running = nil
	h.mu.Unlock()
	h.commands.Wait()
	_ = os.RemoveAll(h.home)
}
