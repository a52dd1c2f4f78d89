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

package cni_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	"golang.org/x/sys/unix"
)

// Helpers for tests that place a verb at a chosen point of another's work: the verb runs as
// a process, and the test learns where it is from the files it opens (inotify), not from
// time.

// started is a plugin process the test has not waited for yet.
type started struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan error
}

// startPlugin starts the built binary as runPlugin runs it, without waiting for it.
func startPlugin(t *testing.T, verb string, conf []byte, container, node, args string) *started {
	t.Helper()
	p := &started{cmd: exec.Command(plugin), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), "CNI_COMMAND="+verb, "CNI_CONTAINERID="+container, "CNI_NETNS=/var/run/netns/"+container,
		"CNI_IFNAME=net1", "CNI_PATH=/nonexistent", "CNI_ARGS="+args, "NODENAME="+node)
	p.cmd.Stdin = bytes.NewReader(conf)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
	})
	return p
}

// wait waits for the process to exit and returns its failure, naming its output.
func (p *started) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		if err != nil {
			return fmt.Errorf("%v: %s", err, strings.TrimSpace(p.out.String()))
		}
		return nil
	case <-time.After(time.Minute):
		t.Fatal("the plugin process did not exit")
		return nil
	}
}

// gcConf is conf as a GC of it reads it, with valid as its valid attachments (interface net1).
func gcConf(t *testing.T, conf []byte, valid ...string) []byte {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal(conf, &m); err != nil {
		t.Fatal(err)
	}
	va := []types.GCAttachment{}
	for _, v := range valid {
		va = append(va, types.GCAttachment{ContainerID: v, IfName: "net1"})
	}
	m["cni.dev/valid-attachments"] = va
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// whenOpened returns a channel that is closed once some process opens path (which must
// exist): the test knows a verb has come that far, and no clock is involved.
func whenOpened(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN); err != nil {
		_ = unix.Close(fd)
		t.Fatal(err)
	}
	// Through the runtime's poller, so that closing the file ends a pending read.
	f := os.NewFile(uintptr(fd), "inotify")
	t.Cleanup(func() { _ = f.Close() })
	opened := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		if n, err := f.Read(buf); err == nil && n > 0 {
			close(opened)
		}
	}()
	return opened
}

// waitOpened waits until the channel whenOpened returned is closed.
func waitOpened(t *testing.T, opened <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-opened:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s never came", what)
	}
}
