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
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// markPendingAgain rewrites an attachment's record as a flush whose answer was lost leaves
// it: its entry still pending (tried says whether the flusher noted the uncertain write),
// and its pending marker back.
func markPendingAgain(t *testing.T, dir, container string, tried bool) {
	t.Helper()
	rewritePending(t, dir, container, func(rec map[string]any) {
		for _, e := range rec["entries"].([]any) {
			e.(map[string]any)["pending"] = true
			if tried {
				e.(map[string]any)["tried"] = true
			}
		}
	})
}

// rewritePending rewrites an attachment's record with edit and puts its pending marker back,
// for the next flusher to find.
func rewritePending(t *testing.T, dir, container string, edit func(rec map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, container+"_net1")
	b, err := os.ReadFile(path)
	rec := map[string]any{}
	if err != nil || json.Unmarshal(b, &rec) != nil {
		t.Fatalf("record %s: %v %s", path, err, b)
	}
	edit(rec)
	if b, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".pending"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".pending", container+"_net1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// poolEntry waits until the pool's entry for a is want's container ("" for none).
func poolEntry(t *testing.T, pool string, slice netip.Prefix, a netip.Addr, want string) {
	t.Helper()
	eventually(t, func() error {
		p := &wbv1.IPPool{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: poolNS, Name: pool}, p); err != nil {
			return err
		}
		if got := p.Spec.Allocations[cni.Offset(slice, a)].ContainerID; got != want {
			return fmt.Errorf("pool entry of %s is %q's, want %q's", a, got, want)
		}
		return nil
	})
}

// TestLeakedEntryDoesNotBlockTheFlusher: a pool entry left by a write whose answer was lost
// and the DEL after it does not keep the flusher writing the next holder's entry forever:
// the entry of an attachment gone from the node, whose reservation is the new holder's, is
// taken over, and the flusher goes idle.
func TestLeakedEntryDoesNotBlockTheFlusher(t *testing.T) {
	slicePool(t, "leaknet", "10.89.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-k", SliceRange: "10.89.0.16/28"})
	slice, pool := netip.MustParsePrefix("10.89.0.16/28"), "leaknet-node-k-10.89.0.16-28"
	conf := netConf("1.1.0", "leaknet", `"range":"10.89.0.0/24","node_slice_size":"/28"`)
	a := addProcess(t, conf, "node-k", "c-leak-x")
	poolEntry(t, pool, slice, a, "c-leak-x")
	dir := netDir(t, "node-k", "leaknet")
	flusherGone(t, dir)
	// As the previous version left it: pending, nothing saying the write may have landed.
	markPendingAgain(t, dir, "c-leak-x", false)
	if _, err := runPlugin("DEL", conf, "c-leak-x", "node-k", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-leak-x"); err != nil {
		t.Fatal(err)
	}
	poolEntry(t, pool, slice, a, "c-leak-x") // the leak
	recordGone(t, dir, "c-leak-x")
	if got := addProcess(t, conf, "node-k", "c-leak-y"); got != a {
		t.Fatalf("the next ADD got %s, not the leaked %s", got, a)
	}
	poolEntry(t, pool, slice, a, "c-leak-y")
	flusherGone(t, dir)
}

// TestDelRemovesAnEntryWhoseWriteMayHaveLanded: DEL of an entry the flusher tried to write
// without learning the outcome removes it from the pool.
func TestDelRemovesAnEntryWhoseWriteMayHaveLanded(t *testing.T) {
	slicePool(t, "triednet", "10.88.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-k", SliceRange: "10.88.0.32/28"})
	slice, pool := netip.MustParsePrefix("10.88.0.32/28"), "triednet-node-k-10.88.0.32-28"
	conf := netConf("1.1.0", "triednet", `"range":"10.88.0.0/24","node_slice_size":"/28"`)
	a := addProcess(t, conf, "node-k", "c-tried")
	poolEntry(t, pool, slice, a, "c-tried")
	dir := netDir(t, "node-k", "triednet")
	flusherGone(t, dir)
	markPendingAgain(t, dir, "c-tried", true)
	if _, err := runPlugin("DEL", conf, "c-tried", "node-k", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-tried"); err != nil {
		t.Fatal(err)
	}
	// The DEL is written behind it, by the flusher.
	eventually(t, func() error {
		if got := ippool(t, pool).Spec.Allocations; len(got) != 0 {
			return fmt.Errorf("DEL left the entry whose write may have landed: %v", got)
		}
		return nil
	})
}

// recordGone waits until the flusher has carried out the DEL of container: its record is
// gone once its pool entry and reservation are.
func recordGone(t *testing.T, dir, container string) {
	t.Helper()
	eventually(t, func() error {
		if _, err := os.Stat(filepath.Join(dir, container+"_net1")); !os.IsNotExist(err) {
			return fmt.Errorf("record of %s still there (%v)", container, err)
		}
		return nil
	})
}

// TestStartingFlusherOutlastsAProbe: a flusher that starts while a DEL or GC holds the
// flusher lock to see whether one runs waits for it and writes the pending entries, instead
// of taking the probe for a flusher and exiting.
func TestStartingFlusherOutlastsAProbe(t *testing.T) {
	slicePool(t, "probenet", "10.88.1.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-q", SliceRange: "10.88.1.48/28"})
	slice, pool := netip.MustParsePrefix("10.88.1.48/28"), "probenet-node-q-10.88.1.48-28"
	conf := netConf("1.1.0", "probenet", `"range":"10.88.1.0/24","node_slice_size":"/28"`)
	a := addProcess(t, conf, "node-q", "c-probe")
	poolEntry(t, pool, slice, a, "c-probe")
	dir := netDir(t, "node-q", "probenet")
	flusherGone(t, dir)
	// The entry pending again, and gone from the pool, as if never written.
	markPendingAgain(t, dir, "c-probe", false)
	p := ippool(t, pool)
	delete(p.Spec.Allocations, cni.Offset(slice, a))
	if err := k8s.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	// The probe: the flusher lock held, as flusherAlive holds it for an instant.
	release, ok := cni.HoldFlusherProbe(dir)
	if !ok {
		t.Fatal("the flusher lock is held with no flusher left")
	}
	defer release()
	cmd := exec.Command(plugin, "flush", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Until the flusher either waits on the lock or has gone.
	var gone bool
	eventually(t, func() error {
		select {
		case <-exited:
			gone = true
			return nil
		default:
		}
		if waiting(cmd.Process.Pid) {
			return nil
		}
		return fmt.Errorf("flusher %d neither waits for the lock nor has exited", cmd.Process.Pid)
	})
	release()
	if gone {
		t.Fatal("the flusher exited on finding the lock held by a probe, its entry unwritten")
	}
	poolEntry(t, pool, slice, a, "c-probe")
	<-exited
}

// waiting says whether process pid is blocked on a file lock (/proc/locks lists waiters
// with "->").
func waiting(pid int) bool {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 5 && f[1] == "->" && f[5] == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}
