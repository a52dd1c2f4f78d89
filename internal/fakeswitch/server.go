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
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// Options describe the switch.
type Options struct {
	// OS is an AnsibleSwitch OS: eos, nxos, dellos10, dellemc.os9.os9, enos, junos or cumulus.
	OS             string
	User, Password string
	// Enable is the enable secret; when set a session starts unprivileged.
	Enable string
	// Ports are the switch's ports; a command naming another port is refused.
	Ports []string
	// Hang, when set, is a command prefix after which the switch stops answering (a switch
	// that hangs in the middle of a push).
	Hang string
	// RefuseSave: the login may configure but not save (write memory and the like).
	RefuseSave bool
	// Shell (cumulus only): exec requests run with /bin/sh, whose net and ip answer from the
	// model (nclu_exec.go), so Python modules such as nclu run on the switch.
	Shell bool
}

// Switch is a running fake switch.
type Switch struct {
	Host    string
	Port    int32
	HostKey string // the host key as AnsibleSwitch.spec.hostKeys takes it

	opts     Options
	model    *model
	listener net.Listener
	config   *ssh.ServerConfig

	mu       sync.Mutex
	commands []string
	logins   int
	conns    []net.Conn
	wg       sync.WaitGroup
	done     chan struct{}

	shellHost *shellHost // Options.Shell
}

// Start listens on 127.0.0.1 on a free port.
func Start(o Options) (*Switch, error) {
	if _, ok := personalities[o.OS]; !ok {
		return nil, fmt.Errorf("fakeswitch: no personality for os %q", o.OS)
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Switch{
		Host: "127.0.0.1", Port: int32(l.Addr().(*net.TCPAddr).Port),
		HostKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))),
		opts:    o, model: newModel(o.OS, o.Ports), listener: l, done: make(chan struct{}),
	}
	s.config = &ssh.ServerConfig{
		PasswordCallback: func(c ssh.ConnMetadata, pass []byte) (*ssh.Permissions, error) {
			if c.User() == o.User && string(pass) == o.Password {
				s.mu.Lock()
				s.logins++
				s.mu.Unlock()
				return nil, nil
			}
			return nil, errors.New("permission denied")
		},
	}
	s.config.AddHostKey(signer)
	if o.Shell {
		if o.OS != "cumulus" {
			_ = l.Close()
			return nil, fmt.Errorf("fakeswitch: Shell is for cumulus, not %q", o.OS)
		}
		if err := s.startShell(); err != nil {
			_ = l.Close()
			return nil, err
		}
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Commands returns every command received so far, in order.
func (s *Switch) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

// Logins is how many logins succeeded.
func (s *Switch) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// Close stops the server and drops its connections.
func (s *Switch) Close() {
	_ = s.listener.Close()
	close(s.done)
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.stopShell()
	s.wg.Wait()
}

func (s *Switch) record(cmd string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = append(s.commands, cmd)
}

func (s *Switch) hasPort(name string) bool {
	for _, p := range s.opts.Ports {
		if strings.ReplaceAll(p, " ", "") == strings.ReplaceAll(name, " ", "") {
			return true
		}
	}
	return false
}

func (s *Switch) accept() {
	defer s.wg.Done()
	for {
		c, err := s.listener.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
		}()
	}
}

func (s *Switch) serve(c net.Conn) {
	defer func() { _ = c.Close() }()
	_, chans, reqs, err := ssh.NewServerConn(c, s.config)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			return
		}
		go s.session(ch, requests)
	}
}

func (s *Switch) session(ch ssh.Channel, requests <-chan *ssh.Request) {
	defer func() { _ = ch.Close() }()
	for r := range requests {
		switch r.Type {
		case "shell":
			_ = r.Reply(true, nil)
			s.shell(ch)
			return
		case "exec":
			var payload struct{ Command string }
			if err := ssh.Unmarshal(r.Payload, &payload); err != nil {
				_ = r.Reply(false, nil)
				return
			}
			_ = r.Reply(true, nil)
			var status uint32
			if s.shellHost != nil {
				status = s.shellExec(ch, payload.Command)
			} else {
				status = s.exec(ch, payload.Command)
			}
			_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
			return
		default: // pty-req, env, window-change
			_ = r.Reply(r.Type == "pty-req" || r.Type == "env" || r.Type == "window-change", nil)
		}
	}
}

// exec runs a command line of a Linux switch (Cumulus): commands joined by && run until one fails.
func (s *Switch) exec(ch ssh.Channel, line string) uint32 {
	for _, cmd := range strings.Split(line, " && ") {
		cmd = strings.TrimSpace(cmd)
		s.record(cmd)
		if s.opts.Hang != "" && strings.HasPrefix(cmd, s.opts.Hang) {
			<-s.done // never answers; Close drops the connection
			return 1
		}
		out, err := cumulusCommand(s, cmd)
		if err != "" {
			_, _ = io.WriteString(ch.Stderr(), err+"\n")
			return 1
		}
		_, _ = io.WriteString(ch, out)
	}
	return 0
}

// shell is an interactive CLI session: echo, output, prompt.
func (s *Switch) shell(ch ssh.Channel) {
	cli := newCLI(s)
	write := func(text string) { _, _ = io.WriteString(ch, strings.ReplaceAll(text, "\n", "\r\n")) }
	write("\n" + cli.prompt())
	var line []byte
	buf := make([]byte, 1024)
	lastCR := false
	for {
		n, err := ch.Read(buf)
		if err != nil {
			return
		}
		for _, b := range buf[:n] {
			switch {
			case b == '\n' && lastCR:
				lastCR = false
				continue
			case b == '\r' || b == '\n':
				lastCR = b == '\r'
				cmd := strings.TrimSpace(string(line))
				line = line[:0]
				if !cli.secret {
					write(cmd + "\n")
				} else {
					write("\n")
				}
				if s.opts.Hang != "" && strings.HasPrefix(cmd, s.opts.Hang) {
					s.record(cmd)
					<-s.done
					return
				}
				out := cli.run(cmd)
				write(out + cli.prompt())
			default:
				lastCR = false
				line = append(line, b)
			}
		}
	}
}
