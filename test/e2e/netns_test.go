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

package e2e

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"
)

// netns is a network namespace made with ip netns: a simulated pod.
type netns string

func (n netns) path() string { return filepath.Join("/var/run/netns", string(n)) }

func addNetns(name string) netns {
	out, err := exec.Command("ip", "netns", "add", name).CombinedOutput()
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), string(out))
	return netns(name)
}

func (n netns) remove() {
	_ = exec.Command("ip", "netns", "del", string(n)).Run()
}

// do runs f on a thread inside the namespace, then moves the thread back. A thread that
// cannot be moved back is thrown away (its goroutine ends locked); that is the last resort
// only, since a thread's death also signals the children it started (the manager's
// Pdeathsig).
func (n netns) do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer func() { _ = unix.Close(home) }()
		fd, err := unix.Open(n.path(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer func() { _ = unix.Close(fd) }()
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering %s: %w", n, err)
			return
		}
		err = f()
		if unix.Setns(home, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// reach opens a TCP connection from pod a to pod b's address and passes a byte.
func reach(a, b netns, addrB net.IP) error {
	var ln net.Listener
	if err := b.do(func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(addrB.String(), "7777"))
		return err
	}); err != nil {
		return err
	}
	defer func() { _ = ln.Close() }()
	got := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err
			return
		}
		defer func() { _ = c.Close() }()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 1)
		_, err = c.Read(buf)
		got <- err
	}()
	if err := a.do(func() error {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(addrB.String(), "7777"), 5*time.Second)
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		_, err = c.Write([]byte{1})
		return err
	}); err != nil {
		return err
	}
	return <-got
}
