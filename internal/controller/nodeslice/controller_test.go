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

package nodeslice_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

var _ = Describe("NodeSlicePool controller", func() {
	It("gives every Node a slice of every network, as whereabouts lists them", func() {
		nodes := createNodes("basic", 3)
		own := createNAD(poolNS, "blue-a", nadConfig("blue-a", "blue", "10.10.0.0/24", "/26", ""))
		// A conflist NAD of the same network in a tenant namespace: same slicing, no owner
		// reference (an owner in another namespace counts as absent to the garbage collector).
		createNAD("team-a", "blue-b", `{"cniVersion":"1.0.0","name":"blue-b","plugins":[{"type":"bridge","ipam":{"type":"whereabouts","range":"10.10.0.0/24","node_slice_size":"26","network_name":"blue"}},{"type":"tuning"}]}`)
		got := expectSliced("blue", nodes...)
		Expect(got).To(Equal(map[string]string{"basic-0": "10.10.0.0/26", "basic-1": "10.10.0.64/26", "basic-2": "10.10.0.128/26"}))
		p := getPool(Default, "blue")
		Expect(p.Spec).To(Equal(nodeslicev1alpha1.NodeSlicePoolSpec{Range: "10.10.0.0/24", SliceSize: "/26"}))
		Expect(p.Status.Allocations).To(HaveLen(4), "every slice is listed, the free one with no node")
		Expect(p.Status.Allocations[3]).To(Equal(nodeslicev1alpha1.NodeSliceAllocation{NodeName: "", SliceRange: "10.10.0.192/26"}))
		Expect(p.OwnerReferences).To(HaveLen(1))
		Expect(p.OwnerReferences[0].UID).To(Equal(own.UID))
		Expect(*p.Status.FreeSlices).To(BeEquivalentTo(1))
		Eventually(condition("blue", nodeslicev1alpha1.ConditionReady)).Should(HavePrefix("True/"))

		By("a Node joining gets the free slice, a deleted Node's slice is freed")
		createNode("basic-3")
		expectSliced("blue", append(nodes, "basic-3")...)
		deleteNode("basic-1")
		expectSliced("blue", "basic-0", "basic-2", "basic-3")
		Expect(getPool(Default, "blue").Status.Allocations[1]).To(Equal(nodeslicev1alpha1.NodeSliceAllocation{SliceRange: "10.10.0.64/26"}))

		By("the pool goes with the network's last NAD")
		Expect(k8s.Delete(ctx, own)).To(Succeed())
		Consistently(poolGone("blue"), 2*time.Second).Should(BeFalse())
		Expect(k8s.DeleteAllOf(ctx, &nadv1NAD, client.InNamespace("team-a"))).To(Succeed())
		Eventually(poolGone("blue")).Should(BeTrue())
	})

	It("keeps a gone node's slice from new nodes while its IPPool holds addresses, then for the grace period", func() {
		createNodes("held", 2)
		createNAD(poolNS, "green", nadConfig("green", "green", "10.20.0.0/25", "/26", ""))
		got := expectSliced("green", "held-0", "held-1")
		// held-1's pods still hold an address in its slice, in the IPPool whereabouts wrote.
		ipp := createIPPool("green-held-1-"+normalize(got["held-1"]), got["held-1"])
		Eventually(condition("green", nodeslicev1alpha1.ConditionSlicesHeld)).Should(Equal("False/NoneHeld: no slice is held back"))
		deleteNode("held-1")
		createNode("held-2")
		Eventually(condition("green", nodeslicev1alpha1.ConditionNodesWithoutSlice)).Should(ContainSubstring("held-2"))
		Eventually(condition("green", nodeslicev1alpha1.ConditionSlicesHeld)).Should(ContainSubstring(got["held-1"] + " (held-1)"))
		Eventually(eventNotes(poolNS, "green")).Should(ContainSubstring("held-2"))
		Consistently(func(g Gomega) map[string]string { return slicesOf(g, "green") }, grace+2*time.Second).ShouldNot(HaveKey("held-2"))

		By("once the addresses are released and the grace period is over, the slice goes to the waiting node")
		ipp.Spec.Allocations = map[string]nodeslicev1alpha1.IPAllocation{}
		Expect(k8s.Update(ctx, ipp)).To(Succeed())
		Expect(expectSliced("green", "held-0", "held-2")["held-2"]).To(Equal(got["held-1"]))
		Eventually(condition("green", nodeslicev1alpha1.ConditionReady)).Should(HavePrefix("True/"))
	})

	It("names the nodes left without a slice and slices them as soon as one frees", func() {
		createNAD(poolNS, "small", nadConfig("small", "", "10.30.0.0/24", "/25", ""))
		createNodes("many", 4)
		Eventually(condition("small", nodeslicev1alpha1.ConditionNodesWithoutSlice)).Should(
			Equal("True/NoFreeSlice: 2 Nodes have no slice (whereabouts fails on them) and get one as soon as a slice frees: many-2, many-3"))
		Expect(*getPool(Default, "small").Status.NodesWithoutSlice).To(BeEquivalentTo(2))
		Eventually(eventNotes(poolNS, "small")).Should(And(ContainSubstring("NoFreeSlice: no free slice of network small"),
			ContainSubstring("many-2"), ContainSubstring("many-3")))
		Eventually(condition("small", nodeslicev1alpha1.ConditionReady)).Should(HavePrefix("False/NoFreeSlice"))
		deleteNode("many-0")
		// After the grace period, the lowest waiting node gets the freed slice.
		expectSliced("small", "many-1", "many-2")
		Eventually(condition("small", nodeslicev1alpha1.ConditionNodesWithoutSlice)).Should(ContainSubstring("1 Nodes have no slice"))
	})

	It("reports NADs that disagree or are wrong, on the NADs and on the pool", func() {
		createNodes("conf", 1)
		createNAD(poolNS, "red-1", nadConfig("red-1", "red", "10.40.0.0/24", "/26", ""))
		expectSliced("red", "conf-0")
		createNAD("team-b", "red-2", nadConfig("red-2", "red", "10.41.0.0/24", "/26", ""))
		createNAD("team-b", "red-3", nadConfig("red-3", "red", "10.40.0.0/24", "/33", ""))
		Eventually(condition("red", nodeslicev1alpha1.ConditionConfigConflict)).Should(And(
			HavePrefix("True/NADsDisagree"), ContainSubstring("NAD team-b/red-2: network red: range 10.41.0.0/24"),
			ContainSubstring("NAD team-b/red-3: spec.config: ipam.node_slice_size")))
		Eventually(eventNotes("team-b", "red-2")).Should(ContainSubstring("NodeSliceConfigConflict: network red: range 10.41.0.0/24"))
		Eventually(eventNotes("team-b", "red-3")).Should(ContainSubstring("InvalidNodeSliceConfig: spec.config: ipam.node_slice_size"))
		Expect(getPool(Default, "red").Spec.Range).To(Equal("10.40.0.0/24"), "the pool follows the oldest NAD")
	})

	It("re-cuts a changed range without giving one address to two nodes", func() {
		createNodes("recut", 2)
		nad := createNAD(poolNS, "amber", nadConfig("amber", "amber", "10.50.0.0/24", "/26", ""))
		before := expectSliced("amber", "recut-0", "recut-1")
		// recut-0's pods hold addresses in its /26.
		createIPPool("amber-recut-0-"+normalize(before["recut-0"]), before["recut-0"])
		nad.Spec.Config = nadConfig("amber", "amber", "10.50.0.0/24", "/28", "")
		Expect(k8s.Update(ctx, nad)).To(Succeed())
		Eventually(func(g Gomega) string { return getPool(g, "amber").Spec.SliceSize }).Should(Equal("/28"))
		after := expectSliced("amber", "recut-0", "recut-1")
		for node, s := range after {
			Expect(overlaps(s, before["recut-0"])).To(BeFalse(), "%s got %s, inside recut-0's old slice that still holds addresses", node, s)
			Expect(overlaps(s, before["recut-1"])).To(BeFalse(), "%s got %s inside recut-1's old slice during the grace period", node, s)
		}
	})

	It("cuts an IPv6 /64 into /80 slices without listing them, and honours exclude and range_start", func() {
		createNodes("six", 3)
		createNAD(poolNS, "v6", nadConfig("v6", "", "fd00:10::/64", "/80", `,"range_start":"fd00:10::1:0:0:5","exclude":["fd00:10:0:0:2::/80"]`))
		got := expectSliced("v6", "six-0", "six-1", "six-2")
		// Slice 1 starts below range_start, slice 2 is excluded.
		Expect(got).To(Equal(map[string]string{"six-0": "fd00:10:0:0:3::/80", "six-1": "fd00:10:0:0:4::/80", "six-2": "fd00:10:0:0:5::/80"}))
		p := getPool(Default, "v6")
		Expect(p.Status.Allocations).To(HaveLen(3), "65,536 slices are not listed; the given ones are")
		Expect(*p.Status.FreeSlices).To(BeEquivalentTo(65536 - 3 - 3))
	})
})
