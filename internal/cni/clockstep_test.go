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
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestAnEntryMarkedBeforeTheClockSteppedBackIsWritten: the node's clock is stepped back (NTP
// correcting a clock that ran ahead) after an ADD marked its entry pending and answered, so
// the marker's time lies in the future. The flusher writes the entry all the same; it must not
// wait, polling, until the clock has caught up with the marker, the pool lacking the entry.
func TestAnEntryMarkedBeforeTheClockSteppedBackIsWritten(t *testing.T) {
	writtenAfterAClockStep(t, "clocknet", "10.84.6", func(dir, id string) {
		future := time.Now().Add(time.Hour)
		if err := os.Chtimes(filepath.Join(dir, ".pending", id+"_net1"), future, future); err != nil {
			t.Fatal(err)
		}
	})
}

// TestARetrySetBeforeTheClockSteppedBackIsTried: the same for an entry whose last write was
// refused: its next try, set before the clock stepped back, lies further off than any backoff.
func TestARetrySetBeforeTheClockSteppedBackIsTried(t *testing.T) {
	writtenAfterAClockStep(t, "steppedretry", "10.84.8", func(dir, id string) {
		path := filepath.Join(dir, id+"_net1")
		b, err := os.ReadFile(path)
		rec := map[string]any{}
		if err != nil || json.Unmarshal(b, &rec) != nil {
			t.Fatalf("record %s: %v %s", path, err, b)
		}
		for _, e := range rec["entries"].([]any) {
			e.(map[string]any)["tries"] = 3
			e.(map[string]any)["retryAt"] = time.Now().Add(time.Hour)
		}
		if b, err = json.Marshal(rec); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	})
}

// writtenAfterAClockStep: an entry left pending, out of its pool, and then stepped (by step,
// on the node's state directory) as a clock stepped back an hour leaves it, is written by the
// flusher the ADD started. net is the /24's first three octets.
func writtenAfterAClockStep(t *testing.T, name, net string, step func(dir, id string)) {
	t.Helper()
	node, id := "node-"+name, "c-"+name
	slicePool(t, name, net+".0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: net + ".16/28"})
	slice, pool := netip.MustParsePrefix(net+".16/28"), name+"-"+node+"-"+net+".16-28"
	conf := netConf("1.1.0", name, `"range":"`+net+`.0/24","node_slice_size":"/28"`)
	a := addProcess(t, conf, node, id)
	poolEntry(t, pool, slice, a, id)
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	// As the ADD left it, before any flusher wrote it: pending, not in the pool.
	p := &wbv1.IPPool{}
	p.Name, p.Namespace = pool, poolNS
	rm := []byte(`[{"op":"remove","path":"/spec/allocations/` + cni.Offset(slice, a) + `"}]`)
	if err := k8s.Patch(context.Background(), p, client.RawPatch(types.JSONPatchType, rm)); err != nil {
		t.Fatal(err)
	}
	markPendingAgain(t, dir, id, false)
	step(dir, id)
	// The flusher the ADD started.
	f := exec.Command(plugin, "flush", dir)
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = f.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = f.Process.Kill()
		<-exited
	})
	poolEntry(t, pool, slice, a, id)
	flusherGone(t, dir)
	if _, err := runPlugin("DEL", conf, id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
		t.Fatal(err)
	}
	recordGone(t, dir, id)
	poolEntry(t, pool, slice, a, "")
	flusherGone(t, dir)
}
