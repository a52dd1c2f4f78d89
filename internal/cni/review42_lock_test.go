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
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// review42Hold takes path's flock, trying for at most wait, and returns the file holding it.
func review42Hold(t *testing.T, path string, wait time.Duration) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			t.Fatalf("taking %s: %v", path, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestReview42RelockTimeoutRollsBackWithoutTheLock: an ADD of a network whose pool is written
// behind lets the node's lock go while it creates its reservation (reserveAside), and takes
// it again after. Before 15e0c6c that second Lock could fail only on an open or flock error;
// now it fails whenever another holder keeps the lock for the network's timeout. The error is
// not errLeftToItsRelease, so add() rolls the attachment back: release() of its in-memory
// record, which unreserves, rewrites the node's view of the pool and removes the record file,
// all WITHOUT the node's lock, while the holder that made the Lock time out still has it (and
// by name, so a retried ADD's record of the same container and interface would go too:
// the very case errLeftToItsRelease exists for).
func TestReview42RelockTimeoutRollsBackWithoutTheLock(t *testing.T) {
	const name, node, id = "r42relock", "node-r42a", "c-r42-relock"
	slicePool(t, name, "10.65.8.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.65.8.16/28"})
	ipam := `"range":"10.65.8.0/24","node_slice_size":"/28"`
	conf := netConf("1.1.0", name, ipam+`,"timeout":"4s","sleep_for_race":2`)
	addStart := time.Now()
	add := startPlugin(t, "ADD", conf, id, node, podArgs(id))
	// The reservation exists: the ADD sleeps (sleep_for_race) without the node's lock.
	reservedBy(t, id)
	dir := netDir(t, node, name)
	held := review42Hold(t, filepath.Join(dir, ".lock"), time.Second)
	recPath := filepath.Join(dir, id+"_net1")
	before, err := os.ReadFile(recPath)
	if err != nil || !bytes.Contains(before, []byte(`"reserving":true`)) {
		t.Fatalf("test timing: the ADD is not in its reservation window (record %s: %v)", before, err)
	}
	start := time.Now()
	addErr := add.wait(t)
	took := time.Since(start)
	if addErr == nil {
		t.Fatal("the ADD answered although the node's lock was held past its timeout")
	}
	t.Logf("ADD failed after %s more, %s in all (timeout 4s): %v", took, time.Since(addStart), addErr)
	// The lock is still the test's: nothing of the node's state may have changed.
	after, err := os.ReadFile(recPath)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the ADD whose re-Lock timed out changed its record while another process held the node's lock: "+
			"before %s, after %s (%v)", before, after, err)
	}
	if err := unix.Flock(int(held.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := startPlugin(t, "DEL", netConf("1.1.0", name, ipam), id, node, podArgs(id)).wait(t); err != nil {
		t.Fatalf("DEL after the failed ADD: %v", err)
	}
}

// TestReview42VerbOutlivesItsTimeoutAcrossTwoLocks: the docs say `timeout` is "the whole
// verb, retries included", and that a verb waits no longer for the node's lock. Each Lock
// waits a fresh lockWait (cfg.Timeout), not what is left of the verb's context: a GC of a
// network with a directory of the old layout takes the new directory's lock and then the
// legacy one, so it can wait almost twice its timeout (likewise ADD's reserveAside re-Lock,
// afterRelease and waitFlushed loops: time spent before each Lock is not counted).
func TestReview42VerbOutlivesItsTimeoutAcrossTwoLocks(t *testing.T) {
	const name, node = "r42gc", "node-r42b"
	conf := netConf("1.1.0", name, `"range":"10.65.9.0/24","timeout":"2s"`)
	legacyDir := filepath.Join(stateDir, node, name)
	if err := os.MkdirAll(legacyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	gc := gcConf(t, conf)
	if err := startPlugin(t, "GC", gc, "", node, "").wait(t); err != nil {
		t.Fatalf("a first GC, nothing held: %v", err)
	}
	main := review42Hold(t, filepath.Join(netDir(t, node, name), ".lock"), time.Second)
	review42Hold(t, filepath.Join(legacyDir, ".lock"), time.Second)
	start := time.Now()
	p := startPlugin(t, "GC", gc, "", node, "")
	time.Sleep(1500 * time.Millisecond)
	if err := unix.Flock(int(main.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	err := p.wait(t)
	took := time.Since(start)
	if err == nil {
		t.Fatal("GC answered with the legacy directory's lock held")
	}
	if took > 2*time.Second+750*time.Millisecond {
		t.Errorf("GC with a timeout of 2s answered after %s: %v", took, err)
	}
}
