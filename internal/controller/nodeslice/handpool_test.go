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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

const managedLabel = "app.kubernetes.io/managed-by"

// handPool writes a NodeSlicePool as a person would (no label, no owner): a /26 cut of rng
// (a /24) with the given node on each slice, "" for a free one; it is deleted when the test ends.
func handPool(name, rng string, nodes ...string) *nodeslicev1alpha1.NodeSlicePool {
	p := &nodeslicev1alpha1.NodeSlicePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: poolNS, Name: name},
		Spec:       nodeslicev1alpha1.NodeSlicePoolSpec{Range: rng, SliceSize: "/26"},
	}
	for i, n := range nodes {
		p.Status.Allocations = append(p.Status.Allocations, nodeslicev1alpha1.NodeSliceAllocation{NodeName: n, SliceRange: slice26(rng, i)})
	}
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, p))).To(Succeed()) })
	return p
}

// slice26 is the i-th /26 of a /24 written "a.b.c.0/24".
func slice26(rng string, i int) string {
	return rng[:len(rng)-len("0/24")] + []string{"0", "64", "128", "192"}[i] + "/26"
}

// untouched fails when the stored pool differs in any way from p as it was created.
func untouched(p *nodeslicev1alpha1.NodeSlicePool) func(Gomega) {
	return func(g Gomega) {
		got := getPool(g, p.Name)
		g.Expect(got.UID).To(Equal(p.UID), "the pool was replaced")
		g.Expect(got.Labels).NotTo(HaveKey(managedLabel))
		g.Expect(got.OwnerReferences).To(BeEmpty())
		g.Expect(got.Spec).To(Equal(p.Spec))
		g.Expect(got.Status).To(Equal(p.Status))
		g.Expect(got.ResourceVersion).To(Equal(p.ResourceVersion), "the pool was written")
	}
}

var _ = Describe("A NodeSlicePool written by hand", func() {
	It("is not written by the network's NADs nor deleted with them; each NAD is told", func() {
		createNodes("byhand", 2)
		// The person gave byhand-0 the second slice, byhand-1 none: rackwire would cut
		// differently (lowest first) and give byhand-1 one.
		p := handPool("byhand", "10.70.0.0/24", "", "byhand-0", "", "")
		Expect(k8s.Create(ctx, p)).To(Succeed())
		a := createNAD(poolNS, "byhand-a", nadConfig("byhand-a", "byhand", "10.70.0.0/24", "/26", ""))
		b := createNAD("team-a", "byhand-b", nadConfig("byhand-b", "byhand", "10.70.0.0/24", "/26", ""))
		createNode("byhand-2")
		Consistently(untouched(p), 2*time.Second).Should(Succeed())
		for _, nad := range []struct{ ns, name string }{{poolNS, "byhand-a"}, {"team-a", "byhand-b"}} {
			Eventually(eventNotes(nad.ns, nad.name)).Should(And(
				ContainSubstring("NodeSlicePoolNotManaged: NodeSlicePool "+poolNS+"/byhand was written by hand"),
				ContainSubstring("add the label app.kubernetes.io/managed-by=rackwire")))
		}

		By("deleting the network's NADs leaves the pool")
		Expect(k8s.Delete(ctx, a)).To(Succeed())
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Consistently(untouched(p), 2*time.Second).Should(Succeed())
	})

	It("is taken over with its slices once it carries rackwire's label", func() {
		createNodes("handover", 2)
		p := handPool("handover", "10.71.0.0/24", "", "handover-0", "", "")
		Expect(k8s.Create(ctx, p)).To(Succeed())
		own := createNAD(poolNS, "handover", nadConfig("handover", "handover", "10.71.0.0/24", "/26", ""))
		Eventually(eventNotes(poolNS, "handover")).Should(ContainSubstring("NodeSlicePoolNotManaged"))
		untouched(p)(Default)

		p.Labels = map[string]string{managedLabel: "rackwire"}
		Expect(k8s.Update(ctx, p)).To(Succeed())
		Expect(expectSliced("handover", "handover-0", "handover-1")).To(Equal(map[string]string{
			"handover-0": "10.71.0.64/26", // kept from the stored pool
			"handover-1": "10.71.0.0/26",
		}))
		Expect(getPool(Default, "handover").OwnerReferences).To(ConsistOf(HaveField("UID", own.UID)))

		By("once rackwire's, it goes with the network's last NAD")
		Expect(k8s.Delete(ctx, own)).To(Succeed())
		Eventually(poolGone("handover")).Should(BeTrue())
	})

	It("is not adopted when it replaces the pool rackwire wrote", func() {
		createNodes("rehand", 2)
		nad := createNAD(poolNS, "rehand", nadConfig("rehand", "rehand", "10.72.0.0/24", "/26", ""))
		Expect(expectSliced("rehand", "rehand-0", "rehand-1")).To(Equal(map[string]string{"rehand-0": "10.72.0.0/26", "rehand-1": "10.72.0.64/26"}))

		By("the person deletes rackwire's pool and writes their own under its name")
		p := handPool("rehand", "10.72.0.0/24", "rehand-1", "rehand-0", "", "")
		Eventually(func(g Gomega) {
			// rackwire writes its pool again when it is gone: if it got there before the
			// person, once more.
			cur := &nodeslicev1alpha1.NodeSlicePool{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(p), cur); err == nil {
				g.Expect(cur.Labels).To(HaveKeyWithValue(managedLabel, "rackwire"))
				g.Expect(client.IgnoreNotFound(k8s.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}))).To(Succeed())
			} else {
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "reading the pool: %v", err)
			}
			p.ResourceVersion, p.UID = "", ""
			g.Expect(k8s.Create(ctx, p)).To(Succeed())
		}).Should(Succeed())
		Eventually(eventNotes(poolNS, "rehand")).Should(ContainSubstring("NodeSlicePoolNotManaged: NodeSlicePool " + poolNS + "/rehand was written by hand"))
		createNode("rehand-2")
		Consistently(untouched(p), 2*time.Second).Should(Succeed())
		Expect(k8s.Delete(ctx, nad)).To(Succeed())
		Consistently(untouched(p), 2*time.Second).Should(Succeed())
	})

	It("is adopted when whereabouts' controller wrote it (a NAD owner reference)", func() {
		createNodes("wbpool", 2)
		// whereabouts' controller owns its pool by the network's NAD, here created before it
		// asks for node slices.
		nad := createNAD(poolNS, "wbpool", `{"cniVersion":"1.0.0","name":"wbpool","type":"bridge","ipam":{"type":"whereabouts","range":"10.73.0.0/24"}}`)
		p := handPool("wbpool", "10.73.0.0/24", "", "wbpool-1", "", "")
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "k8s.cni.cncf.io/v1", Kind: "NetworkAttachmentDefinition",
			Name: nad.Name, UID: nad.UID, Controller: ptr.To(true)}}
		Expect(k8s.Create(ctx, p)).To(Succeed())
		nad.Spec.Config = nadConfig("wbpool", "wbpool", "10.73.0.0/24", "/26", "")
		Expect(k8s.Update(ctx, nad)).To(Succeed())
		Expect(expectSliced("wbpool", "wbpool-0", "wbpool-1")).To(Equal(map[string]string{"wbpool-0": "10.73.0.0/26", "wbpool-1": "10.73.0.64/26"}))
		Expect(getPool(Default, "wbpool").Labels).To(HaveKeyWithValue(managedLabel, "rackwire"))
		Expect(eventNotes(poolNS, "wbpool")()).NotTo(ContainSubstring("NodeSlicePoolNotManaged"))
	})
})

// The CNI binaries read a Node's slice from the pool and keep it a while (rackwire's plugin
// up to 30 s, an ADD in flight up to whereabouts' 2 minutes): when the pool that listed it is
// deleted, the pool rackwire writes in its place must leave each Node the slice it read, or
// two Nodes hand out the same addresses.
var _ = Describe("A NodeSlicePool written by hand, its NADs", func() {
	It("are still told what is wrong in their configuration", func() {
		p := handPool("handbad", "10.77.0.0/24", "", "", "", "")
		Expect(k8s.Create(ctx, p)).To(Succeed())
		createNAD("team-a", "handbad", nadConfig("handbad", "handbad", "10.77.0.0/24", "/33", ""))
		Eventually(eventNotes("team-a", "handbad")).Should(And(
			ContainSubstring("NodeSlicePoolNotManaged"),
			ContainSubstring("InvalidNodeSliceConfig: spec.config: ipam.node_slice_size")))
		untouched(p)(Default)
	})
})

var _ = Describe("A NodeSlicePool written by hand, then deleted", func() {
	It("leaves each Node the slice the deleted pool listed", func() {
		createNodes("handgone", 2)
		// Lowest first would swap them.
		p := handPool("handgone", "10.74.0.0/24", "handgone-1", "handgone-0", "", "")
		Expect(k8s.Create(ctx, p)).To(Succeed())
		createNAD("team-a", "handgone", nadConfig("handgone", "handgone", "10.74.0.0/24", "/26", ""))
		Eventually(eventNotes("team-a", "handgone")).Should(ContainSubstring("rackwire writes the network's pool anew, its Nodes keeping the slices it lists"))

		Expect(k8s.Delete(ctx, p)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(getPool(g, "handgone").UID).NotTo(Equal(p.UID)) }).Should(Succeed())
		Expect(expectSliced("handgone", "handgone-0", "handgone-1")).To(Equal(map[string]string{
			"handgone-0": "10.74.0.64/26",
			"handgone-1": "10.74.0.0/26",
		}))
	})

	It("leaves each Node rackwire's slice when its label was taken off first", func() {
		// unlabel-b joins first and gets the lowest slice; a cut from nothing would swap them.
		createNode("unlabel-b")
		createNAD("team-a", "unlabel", nadConfig("unlabel", "unlabel", "10.75.0.0/24", "/26", ""))
		Expect(expectSliced("unlabel", "unlabel-b")).To(Equal(map[string]string{"unlabel-b": "10.75.0.0/26"}))
		createNode("unlabel-a")
		want := map[string]string{"unlabel-a": "10.75.0.64/26", "unlabel-b": "10.75.0.0/26"}
		Expect(expectSliced("unlabel", "unlabel-a", "unlabel-b")).To(Equal(want))

		By("a person takes the label off (its NADs live elsewhere: no owners), then deletes the pool")
		var p *nodeslicev1alpha1.NodeSlicePool
		Eventually(func(g Gomega) {
			p = getPool(g, "unlabel")
			delete(p.Labels, managedLabel)
			g.Expect(k8s.Update(ctx, p)).To(Succeed())
		}).Should(Succeed())
		Eventually(eventNotes("team-a", "unlabel")).Should(ContainSubstring("NodeSlicePoolNotManaged"))
		Expect(k8s.Delete(ctx, p, client.Preconditions{UID: &p.UID})).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(getPool(g, "unlabel").UID).NotTo(Equal(p.UID)) }).Should(Succeed())
		Expect(expectSliced("unlabel", "unlabel-a", "unlabel-b")).To(Equal(want))
	})
})

var _ = Describe("A NodeSlicePool of rackwire's rewritten by a second writer", func() {
	It("keeps a slice the writer took from a Node away from the other Nodes for the grace period", func() {
		createNodes("moved", 2)
		createNAD("team-a", "moved", nadConfig("moved", "moved", "10.76.0.0/24", "/26", ""))
		Expect(expectSliced("moved", "moved-0", "moved-1")).To(Equal(map[string]string{"moved-0": "10.76.0.0/26", "moved-1": "10.76.0.64/26"}))

		By("a person (or a restored backup) moves moved-1 to the third slice, keeping the label")
		Eventually(func(g Gomega) {
			p := getPool(g, "moved")
			p.Status.Allocations = []nodeslicev1alpha1.NodeSliceAllocation{
				{NodeName: "moved-0", SliceRange: "10.76.0.0/26"}, {SliceRange: "10.76.0.64/26"},
				{NodeName: "moved-1", SliceRange: "10.76.0.128/26"}, {SliceRange: "10.76.0.192/26"},
			}
			g.Expect(k8s.Update(ctx, p)).To(Succeed())
		}).Should(Succeed())
		createNode("moved-2")
		got := expectSliced("moved", "moved-0", "moved-1", "moved-2")
		Expect(got["moved-1"]).To(Equal("10.76.0.128/26"), "the stored pool is the truth")
		// moved-1's binaries read 10.76.0.64/26 until just now.
		Expect(got["moved-2"]).To(Equal("10.76.0.192/26"))
	})
})

var _ = Describe("A NodeSlicePool of rackwire's that a person takes by hand", func() {
	It("keeps a slice the person took from a Node away from the other Nodes for the grace period", func() {
		createNodes("strip", 2)
		createNAD("team-a", "strip", nadConfig("strip", "strip", "10.79.0.0/24", "/26", ""))
		Expect(expectSliced("strip", "strip-0", "strip-1")).To(Equal(map[string]string{"strip-0": "10.79.0.0/26", "strip-1": "10.79.0.64/26"}))

		By("in one write, the label goes and strip-0 moves to the third slice")
		Eventually(func(g Gomega) {
			p := getPool(g, "strip")
			delete(p.Labels, managedLabel)
			p.Status.Allocations = []nodeslicev1alpha1.NodeSliceAllocation{
				{SliceRange: "10.79.0.0/26"}, {NodeName: "strip-1", SliceRange: "10.79.0.64/26"},
				{NodeName: "strip-0", SliceRange: "10.79.0.128/26"}, {SliceRange: "10.79.0.192/26"},
			}
			g.Expect(k8s.Update(ctx, p)).To(Succeed())
		}).Should(Succeed())
		Eventually(eventNotes("team-a", "strip")).Should(ContainSubstring("NodeSlicePoolNotManaged"))

		By("handed back to rackwire, the pool gets a new Node")
		Eventually(func(g Gomega) {
			p := getPool(g, "strip")
			p.Labels = map[string]string{managedLabel: "rackwire"}
			g.Expect(k8s.Update(ctx, p)).To(Succeed())
		}).Should(Succeed())
		createNode("strip-2")
		// strip-0's binaries read 10.79.0.0/26 until the person's write.
		Expect(expectSliced("strip", "strip-0", "strip-1", "strip-2")).To(Equal(map[string]string{
			"strip-0": "10.79.0.128/26", "strip-1": "10.79.0.64/26", "strip-2": "10.79.0.192/26",
		}))
	})
})
