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
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestRefusalEventNamesNoOtherTenant: while the flusher writes a pod's entry, another holder
// (in another namespace) takes the offset in the pool and its reservation, as a foreign
// writer may. The pod is told with a PoolWriteRefused Event in its own namespace, readable by
// whoever may read that namespace's Events: it must not name the other tenant's pod.
func TestRefusalEventNamesNoOtherTenant(t *testing.T) {
	const name, node = "evtenant", "node-evt"
	ctx := context.Background()
	slicePool(t, name, "10.84.7.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.84.7.16/28"})
	slice, pool := netip.MustParsePrefix("10.84.7.16/28"), name+"-"+node+"-10.84.7.16-28"
	conf := netConf("1.1.0", name, `"range":"10.84.7.0/24","node_slice_size":"/28"`)
	first := addProcess(t, conf, node, "c-evt-0")
	poolEntry(t, pool, slice, first, "c-evt-0")
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	g := newGate(t, func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/ippools/"+pool)
	})
	a := addProcessArgs(t, g.through(conf), node, "c-evt-a", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-evt-a;K8S_POD_UID=uid-c-evt-a")
	g.waitHeld(t)
	// The other holder: its pool entry at a's offset, and the address's reservation.
	other := wbv1.IPAllocation{ContainerID: "c-secret", PodRef: "other-tenant/secret-pod", IfName: "net1"}
	b, err := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/allocations/" + cni.Offset(slice, a), "value": other}})
	if err != nil {
		t.Fatal(err)
	}
	p := &wbv1.IPPool{}
	p.Name, p.Namespace = pool, poolNS
	if err := k8s.Patch(ctx, p, client.RawPatch(types.JSONPatchType, b)); err != nil {
		t.Fatal(err)
	}
	resv := &wbv1.OverlappingRangeIPReservation{}
	resv.Name, resv.Namespace = cni.ReservationName(name, a), poolNS
	if err := k8s.Delete(ctx, resv); err != nil {
		t.Fatal(err)
	}
	resv = &wbv1.OverlappingRangeIPReservation{}
	resv.Name, resv.Namespace = cni.ReservationName(name, a), poolNS
	resv.Spec = wbv1.OverlappingRangeIPReservationSpec(other)
	if err := k8s.Create(ctx, resv); err != nil {
		t.Fatal(err)
	}
	g.open()
	eventually(t, func() error {
		if len(refusalEvents(t, "c-evt-a", pool)) == 0 {
			return errors.New("no PoolWriteRefused Event on pod tenant/c-evt-a yet")
		}
		return nil
	})
	for _, ev := range refusalEvents(t, "c-evt-a", pool) {
		if strings.Contains(ev.Message, "other-tenant") || strings.Contains(ev.Message, "secret-pod") {
			t.Errorf("the Event on pod tenant/c-evt-a names the other tenant's pod: %s", ev.Message)
		}
		if !strings.Contains(ev.Message, a.String()) {
			t.Errorf("the Event on pod tenant/c-evt-a does not name its address %s: %s", a, ev.Message)
		}
	}
	for _, id := range []string{"c-evt-a", "c-evt-0"} {
		if _, err := runPlugin("DEL", conf, id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
			t.Fatal(err)
		}
	}
	recordGone(t, dir, "c-evt-a")
	recordGone(t, dir, "c-evt-0")
	flusherGone(t, dir)
	if err := k8s.Delete(ctx, resv); err != nil {
		t.Error(err)
	}
}

// TestRequestedAddressErrorNamesNoOtherTenant: an ADD refused because another pod holds the
// requested address says so without naming a pod of another namespace (the kubelet copies the
// error into the pod's Events); a holder of the pod's own namespace is named.
func TestRequestedAddressErrorNamesNoOtherTenant(t *testing.T) {
	t.Setenv("NODENAME", "node-reqt")
	ctx := context.Background()
	const name = "reqtenant"
	conf := netConf("1.0.0", name, `"range":"10.66.9.0/24"`)
	for _, tc := range []struct {
		addr, holder string
		named        bool
	}{
		{"10.66.9.7", "other-tenant/secret-pod", false},
		{"10.66.9.8", "tenant/neighbour", true},
	} {
		resv := &wbv1.OverlappingRangeIPReservation{}
		resv.Name, resv.Namespace = cni.ReservationName(name, netip.MustParseAddr(tc.addr)), poolNS
		resv.Spec = wbv1.OverlappingRangeIPReservationSpec{ContainerID: "c-holder", PodRef: tc.holder, IfName: "net1"}
		if err := k8s.Create(ctx, resv); err != nil {
			t.Fatal(err)
		}
		_, _, err := attachment{conf: conf, container: "c-reqt-" + tc.addr, pod: "reqt", args: "IP=" + tc.addr}.add()
		switch {
		case err == nil:
			t.Errorf("%s: ADD of an address another pod holds succeeded", tc.addr)
		case !strings.Contains(err.Error(), "reserved by another holder"):
			t.Errorf("%s: ADD failed for another reason: %v", tc.addr, err)
		case strings.Contains(err.Error(), tc.holder) != tc.named:
			t.Errorf("%s: error %q, holder %s named: %v, want %v", tc.addr, err, tc.holder, !tc.named, tc.named)
		}
		if err := k8s.Delete(ctx, resv); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckErrorNamesNoOtherTenant: a CHECK that finds the attachment's reservation taken by
// a pod of another namespace says so without naming that pod (a CHECK's error, like an ADD's,
// reaches the pod's runtime and Events); a holder of the pod's own namespace is named.
func TestCheckErrorNamesNoOtherTenant(t *testing.T) {
	t.Setenv("NODENAME", "node-chkt")
	ctx := context.Background()
	const name = "chktenant"
	conf := netConf("1.1.0", name, `"range":"10.66.10.0/24"`)
	for i, tc := range []struct {
		holder string
		named  bool
	}{
		{"other-tenant/secret-pod", false},
		{"tenant/neighbour", true},
	} {
		a := attachment{conf: conf, container: fmt.Sprintf("c-chkt-%d", i), pod: fmt.Sprintf("chkt-%d", i)}
		res := a.mustAdd(t)
		addr := netip.MustParsePrefix(addrs(res)[0]).Addr()
		resv := &wbv1.OverlappingRangeIPReservation{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: cni.ReservationName(name, addr)}, resv); err != nil {
			t.Fatal(err)
		}
		resv.Spec.ContainerID, resv.Spec.PodRef = "c-holder", tc.holder
		if err := k8s.Update(ctx, resv); err != nil {
			t.Fatal(err)
		}
		err := a.check(t, "1.1.0", res)
		switch {
		case err == nil:
			t.Errorf("%s: CHECK of an address another pod holds succeeded", tc.holder)
		case !strings.Contains(err.Error(), "belongs to"):
			t.Errorf("%s: CHECK failed for another reason: %v", tc.holder, err)
		case strings.Contains(err.Error(), tc.holder) != tc.named:
			t.Errorf("error %q, holder %s named: %v, want %v", err, tc.holder, !tc.named, tc.named)
		}
		if err := k8s.Delete(ctx, resv); err != nil {
			t.Fatal(err)
		}
		_ = a.del()
	}
}
