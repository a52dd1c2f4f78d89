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
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rackwire/rackwire/internal/cni"
)

// TestFullSliceAddSparesTheRetriedAttachment: an ADD that finds the slice full waits for the
// flusher without the node's lock, and meanwhile its attachment has its DEL and the runtime's
// retried ADD of the same container and interface, which answers an address. The first ADD
// then fails, and must leave the retried ADD's record alone: removed by name, the retried
// ADD's address has nothing on the node to release it, and its DEL frees neither the pool
// entry nor the reservation.
func TestFullSliceAddSparesTheRetriedAttachment(t *testing.T) {
	const name, node = "fullslicereadd", "node-fsr"
	ids := []string{"c-fsr-1", "c-fsr-2", "c-fsr-3", "c-fsr-4", "c-fsr-5"}
	fs := fillSlice(t, name, node, "10.84.6.0/24", "10.84.6.8/29", ids, "c-fsr-x")
	conf, pool, dir, g := fs.conf, fs.pool, fs.dir, fs.g
	if _, err := runPlugin("DEL", conf, "c-fsr-x", node, podArgs("c-fsr-x")); err != nil {
		t.Fatal(err)
	}
	probed := whenOpened(t, filepath.Join(dir, ".flusher"))
	first := startPlugin(t, "ADD", conf, "c-fsr-y", node, podArgs("c-fsr-y"))
	waitOpened(t, probed, "the full-slice ADD's wait for the flusher")
	if _, err := runPlugin("DEL", conf, "c-fsr-y", node, podArgs("c-fsr-y")); err != nil {
		t.Fatal(err)
	}
	// The first ADD stays in its wait, the node's lock let go, until the retried ADD has
	// answered.
	stopUnlocked(t, first, filepath.Join(dir, ".lock"))
	g.open()
	flusherGone(t, dir)
	again := addProcess(t, conf, node, "c-fsr-y")
	poolEntry(t, pool, fs.slice, again, "c-fsr-y")
	if err := first.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	firstErr := first.wait(t)
	if _, err := os.Stat(filepath.Join(dir, "c-fsr-y_net1")); err != nil {
		t.Errorf("the retried ADD's record of %s is gone after the first ADD ended (%v): %v", again, firstErr, err)
	}
	if o, ok := reservation(t, cni.ReservationName(name, again)); !ok || o.Spec.ContainerID != "c-fsr-y" {
		t.Errorf("the retried ADD's reservation of %s is gone after the first ADD ended (%v)", again, firstErr)
	}
	delAll(t, conf, node, dir, pool, append(ids, "c-fsr-y")...)
	if o, ok := reservation(t, cni.ReservationName(name, again)); ok {
		t.Errorf("reservation of %s left for %s after its DEL", again, o.Spec.ContainerID)
	}
}

// stopUnlocked stops p at a moment it does not hold the node's lock (lock, a flock).
func stopUnlocked(t *testing.T, p *started, lock string) {
	t.Helper()
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	t.Cleanup(func() { _ = p.cmd.Process.Signal(syscall.SIGCONT) })
	for range 1000 {
		if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		waitStopped(t, p.cmd.Process.Pid)
		// A stopped process gives up no lock: one it holds, the test cannot take.
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
			return
		}
		if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the process held the node's lock each time it was stopped")
}

// waitStopped waits until process pid is in the stopped state: a SIGSTOP sent is not yet a
// process stopped.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	for range 5000 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'T' {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("process %d never stopped", pid)
}
