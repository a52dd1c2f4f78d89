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
	"net/netip"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// deleteReservation deletes an address's reservation as whereabouts' ip-control-loop or its
// DEL does: by name, whoever holds it.
func deleteReservation(t *testing.T, network string, a netip.Addr) {
	t.Helper()
	o, ok := reservation(t, cni.ReservationName(network, a))
	if !ok {
		t.Fatalf("no reservation of %s", a)
	}
	if err := k8s.Delete(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

// TestReservationGoneUnderALivePod: a pod's reservation deleted behind its back does not
// make its address free while the pool records it, with or without node slices.
func TestReservationGoneUnderALivePod(t *testing.T) {
	slicePool(t, "lock2s", "10.86.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-l2", SliceRange: "10.86.0.16/28"})
	for _, tc := range []struct{ name, ipam string }{
		{"lock2p", `"range":"10.85.0.0/24"`},
		{"lock2s", `"range":"10.86.0.0/24","node_slice_size":"/28"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NODENAME", "node-l2")
			conf := netConf("1.1.0", tc.name, tc.ipam)
			held := firstAddr(t, attachment{conf: conf, container: "c-" + tc.name + "-0", pod: tc.name + "-0"})
			deleteReservation(t, tc.name, held)
			for i := 1; i <= 2; i++ {
				if got := firstAddr(t, attachment{conf: conf, container: "c-" + tc.name + "-" + string(rune('0'+i)), pod: tc.name}); got == held {
					t.Fatalf("ADD #%d got %s, the live pod's address whose reservation was deleted", i, got)
				}
			}
		})
	}
}

// TestReservationGoneUnderAClaim: an IPAMClaim's address whose reservation was deleted (as
// whereabouts' ip-control-loop does to every reservation whose podref is no pod) is never
// handed to a pod while the claim lists it in status.ips.
func TestReservationGoneUnderAClaim(t *testing.T) {
	t.Setenv("NODENAME", "node-l3")
	ctx := context.Background()
	conf := netConf("1.1.0", "lock2c", `"range":"10.87.0.0/24"`)
	claimWithIPs(t, "vm9", "tenant/lock2c", "vm9.lock2c", "lock2c", "10.87.0.1/24")
	claimAddr := netip.MustParseAddr("10.87.0.1")
	orip := &wbv1.OverlappingRangeIPReservation{ObjectMeta: metav1.ObjectMeta{Name: cni.ReservationName("lock2c", claimAddr), Namespace: poolNS,
		Labels: map[string]string{"rackwire.metal3.io/ipamclaim": "vm9.lock2c", "rackwire.metal3.io/ipamclaim-namespace": "tenant"}},
		Spec: wbv1.OverlappingRangeIPReservationSpec{PodRef: "tenant/vm9.lock2c"}}
	if err := k8s.Create(ctx, orip); err != nil {
		t.Fatal(err)
	}
	if got := firstAddr(t, attachment{conf: conf, container: "c-lock2c-0", pod: "lock2c-0"}); got == claimAddr {
		t.Fatalf("ADD got the claim's %s while its reservation exists", got)
	}
	deleteReservation(t, "lock2c", claimAddr)
	for i := 1; i <= 2; i++ {
		if got := firstAddr(t, attachment{conf: conf, container: "c-lock2c-" + string(rune('0'+i)), pod: "lock2c"}); got == claimAddr {
			t.Fatalf("ADD #%d got %s, the VM's address in its IPAMClaim's status.ips", i, got)
		}
	}
}
