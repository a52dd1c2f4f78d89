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
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestGCJudgesRecordsAsTheyAreAfterItsWait: a GC waits for the flusher writing the entry of
// one attachment it releases (c-gw-a). Meanwhile another GC, whose list has c-gw-a, releases
// c-gw-x, which the first GC read too, and c-gw-x is added again (a new life of the same
// container and interface, which no GC list judged). When the first GC goes on, it must go by
// the records as they are then: c-gw-x keeps its record, its reservation and its pool entry.
// Judged from the records read before the wait, the first GC released the new life.
func TestGCJudgesRecordsAsTheyAreAfterItsWait(t *testing.T) {
	const name, node = "gcwait", "node-gw"
	t.Setenv("NODENAME", node)
	slicePool(t, name, "10.84.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.84.0.16/28"})
	slice, pool := netip.MustParsePrefix("10.84.0.16/28"), name+"-"+node+"-10.84.0.16-28"
	conf := netConf("1.1.0", name, `"range":"10.84.0.0/24","node_slice_size":"/28"`)
	x := addProcess(t, conf, node, "c-gw-x")
	poolEntry(t, pool, slice, x, "c-gw-x")
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	// c-gw-a's ADD starts a flusher whose write of c-gw-a's entry waits in the gate.
	g := newGate(t, func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/ippools/"+pool)
	})
	a := addProcess(t, g.through(conf), node, "c-gw-a")
	g.waitHeld(t)
	// The first GC reads every record (c-gw-x's last, by name), then waits for the flusher.
	read := whenOpened(t, filepath.Join(dir, "c-gw-x_net1"))
	first := startPlugin(t, "GC", gcConf(t, conf), "", node, "")
	waitOpened(t, read, "the first GC's read of c-gw-x's record")
	gc(t, conf, "c-gw-a")
	recordGone(t, dir, "c-gw-x")
	again := addProcess(t, conf, node, "c-gw-x")
	g.open()
	if err := first.wait(t); err != nil {
		t.Fatalf("the first GC: %v", err)
	}
	flusherGone(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "c-gw-x_net1")); err != nil {
		t.Errorf("the first GC dropped the record of c-gw-x's new life: %v", err)
	}
	if o, ok := reservation(t, cni.ReservationName(name, again)); !ok || o.Spec.ContainerID != "c-gw-x" {
		t.Errorf("the first GC released the reservation of %s, c-gw-x's new life: %v %+v", again, ok, o)
	}
	poolEntry(t, pool, slice, again, "c-gw-x")
	if err := checkOf(t, conf, "c-gw-x", again); err != nil {
		t.Errorf("CHECK of c-gw-x's new life: %v", err)
	}
	// c-gw-a was the first GC's to release, once its entry was written.
	recordGone(t, dir, "c-gw-a")
	poolEntry(t, pool, slice, a, "")
	if _, ok := reservation(t, cni.ReservationName(name, a)); ok {
		t.Errorf("the first GC left c-gw-a's reservation of %s", a)
	}
	if _, err := runPlugin("DEL", conf, "c-gw-x", node, podArgs("c-gw-x")); err != nil {
		t.Fatal(err)
	}
	recordGone(t, dir, "c-gw-x")
	flusherGone(t, dir)
	if got := ippool(t, pool).Spec.Allocations; len(got) != 0 {
		t.Errorf("pool entries left after the GC and the DEL: %v", got)
	}
}
