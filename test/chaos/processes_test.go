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

package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// replica is one manager process, started again whenever it exits, as a kubelet would: a
// killed leader, or one that lost its lease while the apiserver was down.
type replica struct {
	name, bin, dir string
	args           []string
	webhookPort    int

	mu       sync.Mutex
	cmd      *exec.Cmd
	log      string
	starts   int
	stopping bool
	exited   chan struct{}
}

func (r *replica) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts++
	r.log = filepath.Join(r.dir, fmt.Sprintf("%s-%d.log", r.name, r.starts))
	f, err := os.Create(r.log)
	if err != nil {
		return err
	}
	cmd := exec.Command(r.bin, r.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return err
	}
	_ = f.Close()
	r.cmd = cmd
	exited := make(chan struct{})
	r.exited = exited
	go func() {
		_ = cmd.Wait()
		close(exited)
		r.mu.Lock()
		again := !r.stopping
		r.mu.Unlock()
		if again {
			time.Sleep(time.Second)
			_ = r.start()
		}
	}()
	return nil
}

// leads reports whether the running process acquired the leader lease.
func (r *replica) leads() bool {
	r.mu.Lock()
	log := r.log
	r.mu.Unlock()
	data, err := os.ReadFile(log)
	return err == nil && bytes.Contains(bytes.ToLower(data), []byte("successfully acquired lease"))
}

func (r *replica) kill() {
	r.mu.Lock()
	cmd := r.cmd
	r.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (r *replica) stop() {
	r.mu.Lock()
	r.stopping = true
	cmd, exited := r.cmd, r.exited
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// apiserver kills the control plane's kube-apiserver and starts it again with the same
// arguments (certificates, etcd, port), as a crash and a restart by its supervisor would.
type apiserver struct {
	pid  int
	argv []string
	cmd  *exec.Cmd // the process started here, once the original was killed
	log  string
}

// findAPIServer finds the kube-apiserver that envtest started as a child of this process.
func findAPIServer(logDir string) (*apiserver, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		closing := strings.LastIndexByte(s, ')')
		if closing < 0 || !strings.Contains(s[:closing], "(kube-apiserver") {
			continue
		}
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			return nil, err
		}
		argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		return &apiserver{pid: pid, argv: argv, log: filepath.Join(logDir, "kube-apiserver.log")}, nil
	}
	return nil, errors.New("no kube-apiserver child of this process")
}

// kill freezes the apiserver for a while, then sends SIGKILL and waits until the process is
// gone. Frozen, it keeps the requests the managers send meanwhile unanswered, so the kill
// cuts creates short whatever the machine's speed (an instant kill of a fast apiserver often
// finds no request in flight, and then tests nothing of settling creates).
func (a *apiserver) kill() error {
	if err := syscall.Kill(a.pid, syscall.SIGSTOP); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	if err := syscall.Kill(a.pid, syscall.SIGKILL); err != nil {
		return err
	}
	if a.cmd != nil {
		_ = a.cmd.Wait()
		return nil
	}
	for range 100 {
		if err := syscall.Kill(a.pid, 0); err != nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver %d still alive after SIGKILL", a.pid)
}

func (a *apiserver) restart() error {
	f, err := os.OpenFile(a.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	cmd := exec.Command(a.argv[0], a.argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	a.cmd, a.pid = cmd, cmd.Process.Pid
	return nil
}

// stop ends the process started here, if any, so that envtest stops only etcd.
func (a *apiserver) stop() {
	if a.cmd == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
	}
}

// webhookProxy listens where the control plane's webhook configurations point and passes
// each connection (TLS and all) to the first replica that accepts it: only one process can
// own that port, and either replica may be down.
func webhookProxy(ctx context.Context, addr string, replicas []*replica) (func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = in.Close() }()
				var out net.Conn
				for i := 0; out == nil && i < 50; i++ {
					for _, r := range replicas {
						if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.webhookPort)), time.Second); err == nil {
							out = c
							break
						}
					}
					if out == nil {
						time.Sleep(100 * time.Millisecond)
					}
				}
				if out == nil {
					return
				}
				defer func() { _ = out.Close() }()
				go func() { _, _ = io.Copy(out, in); _ = out.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	return func() { _ = l.Close() }, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
