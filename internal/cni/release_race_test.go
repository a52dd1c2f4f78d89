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
	"net/http"
	"net/netip"
	"strings"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestGCAndReAddDuringARelease: the flusher has picked a DEL's release and waits on its pool
// write; meanwhile GC releases the same attachment itself and an ADD of the same container
// and interface gets the same address and its own reservation. When the flusher goes on, its
// release must not delete that reservation (its name is the address's, and its holder is the
// same container and interface): the new attachment keeps both its locks.
func TestGCAndReAddDuringARelease(t *testing.T) {
	const name, node, id = "gcreadd", "node-g", "c-gc-readd"
	t.Setenv("NODENAME", node)
	slicePool(t, name, "10.83.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.83.0.16/28"})
	slice, pool := netip.MustParsePrefix("10.83.0.16/28"), name+"-"+node+"-10.83.0.16-28"
	conf := netConf("1.1.0", name, `"range":"10.83.0.0/24","node_slice_size":"/28"`)
	podArgs := "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=" + id
	first := addProcess(t, conf, node, id)
	poolEntry(t, pool, slice, first, id)
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	// The DEL starts a flusher whose requests go through the gate; its first pool write (the
	// release) waits there.
	g := newGate(t, func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/ippools/"+pool)
	})
	if _, err := runPlugin("DEL", g.through(conf), id, node, podArgs); err != nil {
		t.Fatal(err)
	}
	g.waitHeld(t)
	gc(t, conf)
	again := addProcess(t, conf, node, id)
	if again != first {
		t.Fatalf("the ADD after GC got %s, not the freed %s: the interleaving this test is about did not happen", again, first)
	}
	g.open()
	flusherGone(t, dir)
	o, ok := reservation(t, cni.ReservationName(name, again))
	if !ok || o.Spec.ContainerID != id {
		t.Fatalf("the released attachment's flush deleted the new ADD's reservation of %s: %v %+v", again, ok, o)
	}
	poolEntry(t, pool, slice, again, id)
	if _, err := runPlugin("DEL", conf, id, node, podArgs); err != nil {
		t.Fatal(err)
	}
	poolEntry(t, pool, slice, again, "")
	eventually(t, func() error {
		if _, ok := reservation(t, cni.ReservationName(name, again)); ok {
			return fmt.Errorf("reservation of %s still there after the DEL", again)
		}
		return nil
	})
	flusherGone(t, dir)
}

// TestReleaseDeletesAPutBackReservation: a live attachment's reservation deleted by someone
// else and put back (as rackwire's IP reconciler does: another object, the same holder) is
// still the attachment's: its DEL, written behind, deletes it, though it is not the object
// the ADD created.
func TestReleaseDeletesAPutBackReservation(t *testing.T) {
	const name, node, id = "putback", "node-g", "c-put-back"
	ctx := context.Background()
	slicePool(t, name, "10.83.1.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.83.1.16/28"})
	slice, pool := netip.MustParsePrefix("10.83.1.16/28"), name+"-"+node+"-10.83.1.16-28"
	conf := netConf("1.1.0", name, `"range":"10.83.1.0/24","node_slice_size":"/28"`)
	a := addProcess(t, conf, node, id)
	poolEntry(t, pool, slice, a, id)
	o, ok := reservation(t, cni.ReservationName(name, a))
	if !ok {
		t.Fatalf("no reservation of %s", a)
	}
	if err := k8s.Delete(ctx, o); err != nil {
		t.Fatal(err)
	}
	back := &wbv1.OverlappingRangeIPReservation{}
	back.Name, back.Namespace, back.Spec = o.Name, o.Namespace, o.Spec
	if err := k8s.Create(ctx, back); err != nil {
		t.Fatal(err)
	}
	if _, err := runPlugin("DEL", conf, id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
		t.Fatal(err)
	}
	poolEntry(t, pool, slice, a, "")
	eventually(t, func() error {
		if o, ok := reservation(t, cni.ReservationName(name, a)); ok {
			return fmt.Errorf("the put-back reservation of %s (%s) is left after the DEL", a, o.UID)
		}
		return nil
	})
	recordGone(t, netDir(t, node, name), id)
	flusherGone(t, netDir(t, node, name))
}

// TestReleaseKeepsAReservationGivenToAnotherHolder: the object the ADD created, rewritten in
// place to name another holder, is that holder's now: the DEL written behind leaves it.
func TestReleaseKeepsAReservationGivenToAnotherHolder(t *testing.T) {
	const name, node, id = "handedon", "node-g", "c-handed-on"
	ctx := context.Background()
	slicePool(t, name, "10.83.2.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.83.2.16/28"})
	slice, pool := netip.MustParsePrefix("10.83.2.16/28"), name+"-"+node+"-10.83.2.16-28"
	conf := netConf("1.1.0", name, `"range":"10.83.2.0/24","node_slice_size":"/28"`)
	a := addProcess(t, conf, node, id)
	poolEntry(t, pool, slice, a, id)
	o, ok := reservation(t, cni.ReservationName(name, a))
	if !ok {
		t.Fatalf("no reservation of %s", a)
	}
	o.Spec = wbv1.OverlappingRangeIPReservationSpec{ContainerID: "c-other", PodRef: "tenant/other", IfName: "net1"}
	if err := k8s.Update(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := runPlugin("DEL", conf, id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
		t.Fatal(err)
	}
	poolEntry(t, pool, slice, a, "")
	dir := netDir(t, node, name)
	recordGone(t, dir, id)
	flusherGone(t, dir)
	if got, ok := reservation(t, cni.ReservationName(name, a)); !ok || got.Spec.ContainerID != "c-other" {
		t.Errorf("the DEL deleted the reservation of %s it had handed on to another holder: %v %+v", a, ok, got)
	}
	if err := k8s.Delete(ctx, o); err != nil {
		t.Error(err)
	}
}
