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
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rackwire/rackwire/internal/cni"
)

// A verb behind a node lock that is never let go (its holder stopped, or hung on a state
// directory that does not answer) waited for it for good, and the runtime learned nothing but
// its own timeout. It now waits for the network's timeout and fails naming the lock; once the
// lock is free, the runtime's retry goes through.
func TestAVerbWaitsForTheNodeLockNoLongerThanItsTimeout(t *testing.T) {
	const node = "node-lockwait"
	conf := netConf("1.1.0", "lockwait", `"range":"10.65.7.0/24","timeout":"2s"`)
	if err := startPlugin(t, "ADD", conf, "c-lw-first", node, podArgs("c-lw-first")).wait(t); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(netDir(t, node, "lockwait"), ".lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	err = startPlugin(t, "ADD", conf, "c-lw-second", node, podArgs("c-lw-second")).wait(t)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "was not had within the network's timeout") {
		t.Fatalf("ADD behind a held node lock: %v; want it to fail naming the lock and the timeout", err)
	}
	if took > 15*time.Second {
		t.Errorf("ADD behind a held node lock failed after %s; want about its timeout of 2s", took)
	}
	err = startPlugin(t, "DEL", conf, "c-lw-first", node, podArgs("c-lw-first")).wait(t)
	if err == nil || !strings.Contains(err.Error(), "was not had within the network's timeout") {
		t.Fatalf("DEL behind a held node lock: %v; want it to fail naming the lock", err)
	}

	if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct{ verb, id string }{{"ADD", "c-lw-second"}, {"DEL", "c-lw-first"}, {"DEL", "c-lw-second"}} {
		if err := startPlugin(t, v.verb, conf, v.id, node, podArgs(v.id)).wait(t); err != nil {
			t.Fatalf("%s %s once the lock is free: %v", v.verb, v.id, err)
		}
	}
}

// A wait given up leaves its file to a goroutine still in flock(2); the lock it gets once the
// holder lets go must go with that file at once, or the node's verbs would queue behind a
// process that no longer wants the lock.
func TestFlockWithinLetsALateLockGo(t *testing.T) {
	name := filepath.Join(t.TempDir(), ".lock")
	open := func() *os.File {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	holder := open()
	if err := cni.FlockWithin(holder, time.Second); err != nil {
		t.Fatalf("a free lock: %v", err)
	}
	waiter := open()
	start := time.Now()
	if err := cni.FlockWithin(waiter, 200*time.Millisecond); !errors.Is(err, cni.ErrLockWait) {
		t.Fatalf("a held lock: %v; want %v", err, cni.ErrLockWait)
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("the wait for a held lock ended after %s; want 200ms", took)
	}
	_ = holder.Close()

	next := open()
	defer func() { _ = next.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := unix.Flock(int(next.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			t.Fatalf("the lock after the holder let go and the waiter gave up: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := unix.Flock(int(next.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	third := open()
	defer func() { _ = third.Close() }()
	if err := unix.Flock(int(third.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("the lock is still held by the waiter that gave up: %v", err)
	}
}
