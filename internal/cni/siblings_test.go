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
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// The network's other pools are the second lock's third record (siblings.go): these tests
// delete a live pod's reservation, as whereabouts' ip-reconciler does for every network that
// sets network_name, and then ADD through another pool of the network. Each failed before the
// node kept the other pools' entries (the fifth review).

// TestOverlappingRangeOfTheSameNetwork: whereabouts' overlapping-range feature (the
// reservation, named by network_name, is shared by every range of the network) is the only
// lock between two NADs of one network_name whose ranges overlap. With a live pod's
// reservation deleted (as whereabouts' ip-reconciler does for every named network), an ADD
// through the other NAD must not hand out the pod's address: the two locks say an
// address recorded for another holder is never handed out, even with its reservation gone.
func TestOverlappingRangeOfTheSameNetwork(t *testing.T) {
	t.Setenv("NODENAME", "node-r45")
	a := confOf("r45-a", "r45net", `"range":"10.145.0.0/24"`)
	b := confOf("r45-b", "r45net", `"range":"10.145.0.0/25"`)
	held := firstAddr(t, attachment{conf: a, container: "c-r45-p1", pod: "r45-p1"})
	if got := ippool(t, "r45net-10.145.0.0-24").Spec.Allocations; len(got) != 1 {
		t.Fatalf("pool A: %v", got)
	}
	// Without the deletion the reservation keeps B off the address.
	if got := firstAddr(t, attachment{conf: b, container: "c-r45-q0", pod: "r45-q0"}); got == held {
		t.Fatalf("B got %s with the reservation in place", got)
	}
	deleteReservation(t, "r45net", held)
	for i, id := range []string{"c-r45-q1", "c-r45-q2"} {
		got := firstAddr(t, attachment{conf: b, container: id, pod: id[2:]})
		if got == held {
			t.Fatalf("ADD #%d through NAD B (10.145.0.0/25, network_name r45net) got %s, which pool A records for live pod r45-p1 (pool A %v, pool B %v)",
				i+1, got, ippool(t, "r45net-10.145.0.0-24").Spec.Allocations, ippool(t, "r45net-10.145.0.0-25").Spec.Allocations)
		}
	}
}

// TestSameRangeOtherNode: the same NAD (no node slices) on two nodes: a live pod's
// reservation deleted on node 1; an ADD on node 2 must not take the address the pool records.
func TestSameRangeOtherNode(t *testing.T) {
	conf := confOf("r45o", "r45o", `"range":"10.146.0.0/24"`)
	t.Setenv("NODENAME", "node-r45a")
	held := firstAddr(t, attachment{conf: conf, container: "c-r45o-p1", pod: "r45o-p1"})
	deleteReservation(t, "r45o", held)
	t.Setenv("NODENAME", "node-r45b")
	if got := firstAddr(t, attachment{conf: conf, container: "c-r45o-q1", pod: "r45o-q1"}); got == held {
		t.Fatalf("ADD on another node got %s, the live pod's address (pool %v)", got, ippool(t, "r45o-10.146.0.0-24").Spec.Allocations)
	}
}

// TestSlicedAndWholeRangeOfOneNetwork: two NADs of one network_name and one range,
// one with node_slice_size and one without (whereabouts keys the reservations of both by
// network_name, so they overlap). With the sliced pod's reservation deleted, an ADD through
// the whole-range NAD on the same node must not hand out the sliced pod's address.
func TestSlicedAndWholeRangeOfOneNetwork(t *testing.T) {
	t.Setenv("NODENAME", "node-r45s")
	slicePool(t, "r45s", "10.147.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-r45s", SliceRange: "10.147.0.0/28"})
	sliced := confOf("r45s-a", "r45s", `"range":"10.147.0.0/24","node_slice_size":"/28"`)
	whole := confOf("r45s-b", "r45s", `"range":"10.147.0.0/24"`)
	held := firstAddr(t, attachment{conf: sliced, container: "c-r45s-p1", pod: "r45s-p1"})
	deleteReservation(t, "r45s", held)
	if got := firstAddr(t, attachment{conf: whole, container: "c-r45s-q1", pod: "r45s-q1"}); got == held {
		t.Fatalf("ADD through the whole-range NAD got %s, which the node's slice pool holds for live pod r45s-p1", got)
	}
}

// TestNADEditedToSlices: a NAD edited to add node_slice_size while its pods keep the
// addresses they got from the whole-range pool; with one's reservation deleted, the edited
// NAD's ADD on the same node must not hand out that pod's address.
func TestNADEditedToSlices(t *testing.T) {
	t.Setenv("NODENAME", "node-r45e")
	slicePool(t, "r45e", "10.148.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-r45e", SliceRange: "10.148.0.0/28"})
	before := confOf("r45e", "r45e", `"range":"10.148.0.0/24"`)
	after := confOf("r45e", "r45e", `"range":"10.148.0.0/24","node_slice_size":"/28"`)
	held := firstAddr(t, attachment{conf: before, container: "c-r45e-p1", pod: "r45e-p1"})
	deleteReservation(t, "r45e", held)
	if got := firstAddr(t, attachment{conf: after, container: "c-r45e-q1", pod: "r45e-q1"}); got == held {
		t.Fatalf("ADD after the NAD took node_slice_size got %s, which the whole-range pool holds for live pod r45e-p1 (%v)",
			got, ippool(t, "r45e-10.148.0.0-24").Spec.Allocations)
	}
}
