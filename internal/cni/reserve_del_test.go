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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestDelWhileTheAddReservesIsKept: an ADD lets go of the node lock while it creates its
// reservation; a DEL of the same attachment comes then (the runtime gave up on the ADD) and
// marks the record released. The ADD, going on, must not write its older copy of the record
// back over the DEL's, whether its reservation landed or the address turned out another
// holder's (the ADD would then go on to the next address): the DEL answered, and nothing
// would release the attachment again. A flusher of the node is busy meanwhile (the test
// holds the flusher lock in its place), so the DEL starts none and the release waits for it.
func TestDelWhileTheAddReservesIsKept(t *testing.T) {
	for i, taken := range []bool{false, true} {
		t.Run(fmt.Sprintf("taken=%v", taken), func(t *testing.T) {
			delWhileReserving(t, fmt.Sprintf("resvdel%d", i), fmt.Sprintf("10.83.%d", 3+i), taken)
		})
	}
}

// delWhileReserving runs TestDelWhileTheAddReservesIsKept on network name, in the /24 net
// (three octets); taken: someone else reserves the ADD's address while it waits.
func delWhileReserving(t *testing.T, name, net string, taken bool) {
	const node, id = "node-rd", "c-resv-del"
	ctx := context.Background()
	slicePool(t, name, net+".0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: net + ".16/28"})
	slice, pool := netip.MustParsePrefix(net+".16/28"), name+"-"+node+"-"+net+".16-28"
	conf := netConf("1.1.0", name, `"range":"`+net+`.0/24","node_slice_size":"/28"`)
	podArgs := "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=" + id
	// Another pod first: the node's directory, its pool and its flusher's configuration.
	other := addProcess(t, conf, node, "c-resv-other")
	poolEntry(t, pool, slice, other, "c-resv-other")
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	busy, err := os.OpenFile(filepath.Join(dir, ".flusher"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	if err := unix.Flock(int(busy.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	g := newGate(t, func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/overlappingrangeipreservations")
	})
	type answer struct {
		out []byte
		err error
	}
	added := make(chan answer, 1)
	go func() {
		out, err := runPlugin("ADD", g.through(conf), id, node, podArgs)
		added <- answer{out, err}
	}()
	g.waitHeld(t)
	if taken {
		// The address after the other pod's, the one the ADD is reserving.
		o := &wbv1.OverlappingRangeIPReservation{}
		o.Name, o.Namespace = cni.ReservationName(name, other.Next()), poolNS
		o.Spec = wbv1.OverlappingRangeIPReservationSpec{ContainerID: "c-resv-taker", PodRef: "tenant/c-resv-taker", IfName: "net1"}
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, o) })
	}
	if _, err := runPlugin("DEL", conf, id, node, podArgs); err != nil {
		t.Fatal(err)
	}
	g.open()
	a := <-added
	if a.err == nil {
		// Its address is being released: handed out, it would be handed out twice.
		t.Errorf("the ADD answered after its attachment's DEL: %s", a.out)
	}
	if err := unix.Flock(int(busy.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	// The busy flusher's next passes: it writes what is pending, releases what was deleted,
	// and exits once idle.
	if out, err := exec.Command(plugin, "flush", dir).CombinedOutput(); err != nil {
		t.Fatalf("flusher: %v: %s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, id+"_net1")); err == nil {
		t.Errorf("the DEL was lost: the record of %s is live again once the ADD went on: %s", id, b)
	}
	for k, al := range ippool(t, pool).Spec.Allocations {
		if al.ContainerID == id {
			t.Errorf("the deleted attachment holds offset %s of IPPool %s", k, pool)
		}
	}
	for addr := slice.Addr().Next(); slice.Contains(addr); addr = addr.Next() {
		if o, ok := reservation(t, cni.ReservationName(name, addr)); ok && o.Spec.ContainerID == id {
			t.Errorf("the deleted attachment still holds the reservation of %s", addr)
		}
	}
	if _, err := runPlugin("DEL", conf, "c-resv-other", node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-resv-other"); err != nil {
		t.Fatal(err)
	}
	recordGone(t, dir, "c-resv-other")
	flusherGone(t, dir)
}
