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

// Slice pools count as the network's without its NodeSlicePool listing them (the fifth
// review's second round): the NodeSlicePool forgets a slice whose pod still holds its address.

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestSiblingsNSPGoneSlicePoolsLive: NAD edited from node slices back to a whole range; its
// NodeSlicePool is gone (404) while the slice pool still records a live pod.
func TestSiblingsNSPGoneSlicePoolsLive(t *testing.T) {
	t.Setenv("NODENAME", "node-r47g")
	nsp := slicePool(t, "r47g", "10.247.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-r47g", SliceRange: "10.247.0.0/28"})
	sliced := confOf("r47g", "r47g", `"range":"10.247.0.0/24","node_slice_size":"/28"`)
	whole := confOf("r47g", "r47g", `"range":"10.247.0.0/24"`)
	held := firstAddr(t, attachment{conf: sliced, container: "c-r47g-p1", pod: "r47g-p1"})
	deleteReservation(t, "r47g", held)
	if err := k8s.Delete(context.Background(), nsp); err != nil {
		t.Fatal(err)
	}
	if got := firstAddr(t, attachment{conf: whole, container: "c-r47g-q1", pod: "r47g-q1"}); got == held {
		t.Fatalf("whole-range ADD got %s, which slice pool r47g-node-r47g-10.247.0.0-28 records for live pod r47g-p1 (%v); NodeSlicePool r47g is gone",
			got, ippool(t, "r47g-node-r47g-10.247.0.0-28").Spec.Allocations)
	}
}

// TestSiblingsNSPResliced: node_slice_size changed (/28 -> /27): the NodeSlicePool now lists the
// node with another slice; the old slice pool still records a live pod.
func TestSiblingsNSPResliced(t *testing.T) {
	t.Setenv("NODENAME", "node-r47r")
	nsp := slicePool(t, "r47r", "10.247.1.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-r47r", SliceRange: "10.247.1.0/28"})
	sliced := confOf("r47r", "r47r", `"range":"10.247.1.0/24","node_slice_size":"/28"`)
	whole := confOf("r47r-w", "r47r", `"range":"10.247.1.0/24"`)
	held := firstAddr(t, attachment{conf: sliced, container: "c-r47r-p1", pod: "r47r-p1"})
	deleteReservation(t, "r47r", held)
	cur := &wbv1.NodeSlicePool{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(nsp), cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.SliceSize = "/27"
	if err := k8s.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	cur.Status.Allocations = []wbv1.NodeSliceAllocation{{NodeName: "node-r47r", SliceRange: "10.247.1.32/27"}}
	if err := k8s.Status().Update(context.Background(), cur); err != nil {
		// status may not be a subresource
		if err := k8s.Update(context.Background(), cur); err != nil {
			t.Fatal(err)
		}
	}
	if got := firstAddr(t, attachment{conf: whole, container: "c-r47r-q1", pod: "r47r-q1"}); got == held {
		t.Fatalf("whole-range ADD got %s, which old slice pool r47r-node-r47r-10.247.1.0-28 records for live pod r47r-p1 (%v)",
			got, ippool(t, "r47r-node-r47r-10.247.1.0-28").Spec.Allocations)
	}
}

// TestSiblingsUnnamedOtherNADSlices: two unnamed NADs (one address space: bare-address
// reservations) on one range, one sliced; the whole-range NAD reads NodeSlicePool by its own
// config name, so the other NAD's slice pool is never read.
func TestSiblingsUnnamedOtherNADSlices(t *testing.T) {
	t.Setenv("NODENAME", "node-r47u")
	slicePool(t, "r47u-s", "10.247.2.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-r47u", SliceRange: "10.247.2.0/28"})
	sliced := confOf("r47u-s", "", `"range":"10.247.2.0/24","node_slice_size":"/28"`)
	whole := confOf("r47u-w", "", `"range":"10.247.2.0/24"`)
	held := firstAddr(t, attachment{conf: sliced, container: "c-r47u-p1", pod: "r47u-p1"})
	deleteReservation(t, "", held)
	if got := firstAddr(t, attachment{conf: whole, container: "c-r47u-q1", pod: "r47u-q1"}); got == held {
		t.Fatalf("unnamed whole-range NAD r47u-w got %s, which unnamed NAD r47u-s's slice pool node-r47u-10.247.2.0-28 records (%v)",
			got, ippool(t, "node-r47u-10.247.2.0-28").Spec.Allocations)
	}
}

// TestSiblingReadError: a non-404 answer to a sibling pool's GET fails the ADD, and says so.
func TestSiblingReadError(t *testing.T) {
	t.Setenv("NODENAME", "node-r47e")
	a := confOf("r47e-a", "r47e", `"range":"10.247.3.0/24"`)
	b := confOf("r47e-b", "r47e", `"range":"10.247.3.0/25"`)
	firstAddr(t, attachment{conf: a, container: "c-r47e-p1", pod: "r47e-p1"})
	kc := newProxy(t, func(w http.ResponseWriter, r *http.Request, forward http.Handler) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/ippools/r47e-10.247.3.0-24") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"ippools \"r47e-10.247.3.0-24\" is forbidden: nope","reason":"Forbidden","code":403}`))
			return
		}
		forward.ServeHTTP(w, r)
	})
	b = []byte(strings.ReplaceAll(string(b), kubeconfig, kc))
	_, _, err := attachment{conf: b, container: "c-r47e-q1", pod: "r47e-q1"}.add()
	t.Logf("ADD error: %v", err)
	if err == nil {
		t.Fatal("ADD succeeded although the sibling pool could not be read")
	}
}

// TestSiblingsManySlicePools: more sibling pools than siblingReads, under -race.
func TestSiblingsManySlicePools(t *testing.T) {
	var allocs []wbv1.NodeSliceAllocation
	for i := 0; i < 20; i++ {
		allocs = append(allocs, wbv1.NodeSliceAllocation{NodeName: fmt.Sprintf("node-r47m-%d", i), SliceRange: fmt.Sprintf("10.247.5.%d/28", i*8/8*16%256)})
	}
	allocs = allocs[:16]
	slicePool(t, "r47m", "10.247.5.0/24", "/28", allocs...)
	sliced := confOf("r47m-a", "r47m", `"range":"10.247.5.0/24","node_slice_size":"/28"`)
	var held []netip.Addr
	for i := range allocs {
		t.Setenv("NODENAME", allocs[i].NodeName)
		a := firstAddr(t, attachment{conf: sliced, container: fmt.Sprintf("c-r47m-p%d", i), pod: fmt.Sprintf("r47m-p%d", i)})
		deleteReservation(t, "r47m", a)
		held = append(held, a)
	}
	t.Setenv("NODENAME", "node-r47m-x")
	whole := confOf("r47m-b", "r47m", `"range":"10.247.5.0/24"`)
	got := firstAddr(t, attachment{conf: whole, container: "c-r47m-q", pod: "r47m-q"})
	if slices.Contains(held, got) {
		t.Fatalf("whole-range ADD got %s, held in a slice pool", got)
	}
	t.Logf("got %s", got)
}
