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
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestTornRecordKeepsItsHoldersPoolEntry: a record that does not read as one (a power cut's)
// is no proof that its attachment is gone: its DEL has not come. The flusher, finding the
// offset it writes held in the pool by that attachment, does not take the entry over as
// leaked, even where the address's reservation is the new holder's (deleted by name behind
// the live pod's back, as whereabouts' DEL does, and taken since).
func TestTornRecordKeepsItsHoldersPoolEntry(t *testing.T) {
	const name, node = "tornleak", "node-tl"
	slicePool(t, name, "10.130.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.130.0.16/28"})
	slice, pool := netip.MustParsePrefix("10.130.0.16/28"), "tornleak-node-tl-10.130.0.16-28"
	conf := netConf("1.1.0", name, `"range":"10.130.0.0/24","node_slice_size":"/28"`)
	x := addProcess(t, conf, node, "c-tl-x")
	poolEntry(t, pool, slice, x, "c-tl-x")
	y := addProcess(t, conf, node, "c-tl-y")
	poolEntry(t, pool, slice, y, "c-tl-y")
	dir := netDir(t, node, name)
	flusherGone(t, dir)

	// c-tl-x's record torn; its reservation deleted by name and made c-tl-y's, whose record
	// names x as its entry still to be written.
	if err := os.WriteFile(filepath.Join(dir, "c-tl-x_net1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deleteReservation(t, name, x)
	orip := &wbv1.OverlappingRangeIPReservation{
		ObjectMeta: metav1.ObjectMeta{Name: cni.ReservationName(name, x), Namespace: poolNS},
		Spec:       wbv1.OverlappingRangeIPReservationSpec{ContainerID: "c-tl-y", IfName: "net1", PodRef: "tenant/c-tl-y"},
	}
	if err := k8s.Create(context.Background(), orip); err != nil {
		t.Fatal(err)
	}
	rewritePending(t, dir, "c-tl-y", func(rec map[string]any) {
		rec["entries"] = []any{map[string]any{"pool": pool, "range": slice.String(), "address": x.String(),
			"reservation": cni.ReservationName(name, x), "pending": true}}
	})

	flusher := exec.Command(plugin, "flush", dir)
	if err := flusher.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = flusher.Process.Kill()
		_ = flusher.Wait()
	}()
	// Until the flusher has tried c-tl-y's entry: refused, or written over c-tl-x's.
	eventually(t, func() error {
		if e := entryOf(t, dir, "c-tl-y"); e["refused"] == nil && e["pending"] == true {
			return fmt.Errorf("c-tl-y's entry not tried yet: %v", e)
		}
		return nil
	})
	if got := ippool(t, pool).Spec.Allocations[cni.Offset(slice, x)].ContainerID; got != "c-tl-x" {
		t.Fatalf("the flusher took %s's pool entry from c-tl-x, whose record is torn, for %q", x, got)
	}
}
