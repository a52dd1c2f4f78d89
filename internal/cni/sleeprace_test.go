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
	"net/netip"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestSleepForRaceHoldsNoOtherPod: a NAD's sleep_for_race (whereabouts' knob, slept between
// an address's reservation and its pool entry) no longer holds the node's lock of the
// network. One tenant's NAD that set it made every other pod of the network on that node
// wait out each of its sleeps, up to the NAD's own timeout, which it chooses too.
func TestSleepForRaceHoldsNoOtherPod(t *testing.T) {
	const name, node = "sleepy", "node-sleepy"
	slicePool(t, name, "10.85.4.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.85.4.16/28"})
	ipam := `"range":"10.85.4.0/24","node_slice_size":"/28"`
	sleeper := startAdd(t, sleepConf(name, ipam), node, "c-sleeper")
	done := make(chan error, 1)
	go func() { done <- sleeper.Wait() }()
	t.Cleanup(func() {
		_ = sleeper.Process.Kill()
		<-done
	})
	// The sleeper has reserved its address: it sleeps from here on.
	reservedBy(t, "c-sleeper")
	plain := netConf("1.1.0", name, ipam)
	a := addProcess(t, plain, node, "c-awake")
	select {
	case err := <-done:
		done <- err
		t.Fatalf("the ADD of another pod of the network returned only after the sleeper's ADD (%v): it waited out the sleep", err)
	default:
	}
	if !netip.MustParsePrefix("10.85.4.16/28").Contains(a) {
		t.Errorf("address %s outside the node's slice", a)
	}
	if _, err := runPlugin("DEL", plain, "c-awake", node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-awake"); err != nil {
		t.Fatal(err)
	}
	_ = sleeper.Process.Kill()
	if _, err := runPlugin("DEL", plain, "c-sleeper", node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-sleeper"); err != nil {
		t.Fatal(err)
	}
}
