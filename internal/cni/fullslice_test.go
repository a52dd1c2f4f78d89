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
	"fmt"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestFullSliceAddWaitsForAnEntryBeingWritten: the flusher is writing c-fs-x's pool entry when
// c-fs-x has its DEL (written behind), and an ADD finds the slice full and carries out the
// node's waiting DELs itself (c-fs-x's and c-fs-z's). It must wait for the write of c-fs-x's
// entry before it releases c-fs-x: released before, the entry lands after the release, held
// by no record and no reservation, and stays in the pool.
func TestFullSliceAddWaitsForAnEntryBeingWritten(t *testing.T) {
	const name, node = "fullslice", "node-fs"
	slicePool(t, name, "10.84.1.0/24", "/29", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.84.1.8/29"})
	slice, pool := netip.MustParsePrefix("10.84.1.8/29"), name+"-"+node+"-10.84.1.8-29"
	conf := netConf("1.1.0", name, `"range":"10.84.1.0/24","node_slice_size":"/29"`)
	podArgs := func(id string) string { return "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=" + id }
	// Six addresses: c-fs-z takes the lowest, four more the next, c-fs-x the last.
	ids := []string{"c-fs-z", "c-fs-1", "c-fs-2", "c-fs-3", "c-fs-4"}
	held := map[string]netip.Addr{}
	for _, id := range ids {
		held[id] = addProcess(t, conf, node, id)
	}
	for _, id := range ids {
		poolEntry(t, pool, slice, held[id], id)
	}
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	g := newGate(t, func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/ippools/"+pool)
	})
	x := addProcess(t, g.through(conf), node, "c-fs-x")
	g.waitHeld(t)
	for _, id := range []string{"c-fs-z", "c-fs-x"} {
		if _, err := runPlugin("DEL", conf, id, node, podArgs(id)); err != nil {
			t.Fatal(err)
		}
	}
	// The full-slice ADD has carried out the DELs (or waits for the flusher) by the time it
	// looks for a flusher: only then does the gate let the write of c-fs-x's entry go on.
	probed := whenOpened(t, filepath.Join(dir, ".flusher"))
	y := startPlugin(t, "ADD", conf, "c-fs-y", node, podArgs("c-fs-y"))
	waitOpened(t, probed, "the full-slice ADD's look for a flusher")
	g.open()
	if err := y.wait(t); err != nil {
		t.Fatalf("ADD in a full slice: %v", err)
	}
	flusherGone(t, dir)
	recordGone(t, dir, "c-fs-x")
	if got := ippool(t, pool).Spec.Allocations[cni.Offset(slice, x)]; got.ContainerID != "" {
		t.Errorf("pool entry of %s left for %s, released while its write was under way", x, got.ContainerID)
	}
	if o, ok := reservation(t, cni.ReservationName(name, x)); ok {
		t.Errorf("reservation of %s left for %s", x, o.Spec.ContainerID)
	}
	for _, id := range append(ids[1:], "c-fs-y") {
		if _, err := runPlugin("DEL", conf, id, node, podArgs(id)); err != nil {
			t.Fatal(err)
		}
	}
	flusherGone(t, dir)
	eventually(t, func() error {
		if got := ippool(t, pool).Spec.Allocations; len(got) != 0 {
			return fmt.Errorf("pool entries left after every DEL: %v", got)
		}
		return nil
	})
}
