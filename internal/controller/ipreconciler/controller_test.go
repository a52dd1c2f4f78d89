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

package ipreconciler_test

import (
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler"
)

const (
	reapedTotal    = "rackwire_ipreconciler_reaped_total"
	restoredTotal  = "rackwire_ipreconciler_reservations_restored_total"
	heldTwiceTotal = "rackwire_ipreconciler_addresses_held_twice_total"
)

var _ = Describe("The IP reconciler", Ordered, func() {
	blue := network{name: "blue", rng: netip.MustParsePrefix("10.70.0.0/24")}
	green := network{name: "green", rng: netip.MustParsePrefix("10.71.0.0/24"), slice: "/28"}
	red := network{name: "red", rng: netip.MustParsePrefix("10.72.0.0/24")}

	BeforeAll(func() {
		blue.createNAD(false, "")
		green.createNAD(false, `,"node_slice_size":"/28"`)
		red.createNAD(true, "")
	})

	It("reaps the allocation and the reservation of a deleted pod after the grace, and keeps a live pod's", func() {
		gonePod, livePod := createPod("web-1", node), createPod("web-2", node)
		dead := allocate(blue, "", blue.rng, "10.70.0.5", gonePod, "c0ffee01")
		live := allocate(blue, "", blue.rng, "10.70.0.6", livePod, "c0ffee02")
		before := counter(reapedTotal, map[string]string{"network_name": "blue", "kind": "IPPoolAllocation", "reason": "PodGone"})

		deletePod(gonePod)
		Eventually(dead.state).Should(Equal("allocated=false reserved=false"))
		Expect(live.state()).To(Equal("allocated=true reserved=true"))
		Expect(counter(reapedTotal, map[string]string{"network_name": "blue", "kind": "IPPoolAllocation", "reason": "PodGone"})).To(Equal(before + 1))
		Expect(counter(reapedTotal, map[string]string{"network_name": "blue", "kind": "OverlappingRangeIPReservation", "reason": "PodGone"})).To(BeNumerically(">=", 1))
		Eventually(eventNotes(poolNS, dead.pool)).Should(ContainSubstring(ipreconciler.ReasonReaped + ": removed 1 allocation(s) of gone holders: 10.70.0.5 of apps/web-1"))
	})

	It("reaps the address of a pod re-created under the same name, and keeps the new pod's", func() {
		old := createPod("db-0", node)
		stale := allocate(blue, "", blue.rng, "10.70.0.10", old, "0ld0ld01")
		o, err := stale.reservation()
		Expect(err).NotTo(HaveOccurred())
		// The new pod must be created past the tolerated clock skew after the old address
		// was reserved, as a StatefulSet's replacement is.
		Eventually(func() bool { return time.Now().After(o.CreationTimestamp.Add(ipreconciler.Skew + time.Second)) }).Should(BeTrue())
		deletePod(old)
		renewed := createPod("db-0", node)
		Expect(renewed.UID).NotTo(Equal(old.UID))
		fresh := allocate(blue, "", blue.rng, "10.70.0.11", renewed, "new00001")

		Eventually(stale.state).Should(Equal("allocated=false reserved=false"))
		Expect(fresh.state()).To(Equal("allocated=true reserved=true"))
		Expect(counter(reapedTotal, map[string]string{"network_name": "blue", "kind": "IPPoolAllocation", "reason": "PodReplaced"})).To(BeNumerically(">=", 1))
	})

	It("does not put back a deleted reservation of an earlier pod of the name, and reaps its allocation", func() {
		old := createPod("cache-0", node)
		stale := allocate(blue, "", blue.rng, "10.70.0.30", old, "0ld0ld02")
		o, err := stale.reservation()
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool { return time.Now().After(o.CreationTimestamp.Add(ipreconciler.Skew + time.Second)) }).Should(BeTrue())
		deletePod(old)
		createPod("cache-0", node)
		before := counter(restoredTotal, map[string]string{"network_name": "blue", "holder": "Pod"})

		// whereabouts' ip-control-loop deletes the reservation: what said that the address
		// was reserved before the pod of that name existed goes with it.
		Expect(k8s.Delete(ctx, o)).To(Succeed())
		Eventually(stale.state).Should(Equal("allocated=false reserved=false"))
		Expect(counter(restoredTotal, map[string]string{"network_name": "blue", "holder": "Pod"})).To(Equal(before))
	})

	It("keeps a live pod's reservation that no allocation records (a flush may be pending), and reaps it and the pod's address once the pod finishes", func() {
		pod := createPod("job-1", node)
		cut := record{net: blue, pool: "blue-10.70.0.0-24", poolRange: blue.rng, addr: netip.MustParseAddr("10.70.0.40"),
			alloc: nodeslicev1alpha1.IPAllocation{ContainerID: "cut00001", PodRef: "apps/job-1", IfName: "net1"}}
		Expect(k8s.Create(ctx, &nodeslicev1alpha1.OverlappingRangeIPReservation{
			ObjectMeta: metav1.ObjectMeta{Name: blue.reservationName(cut.addr), Namespace: poolNS},
			Spec:       nodeslicev1alpha1.OverlappingRangeIPReservationSpec{ContainerID: "cut00001", PodRef: "apps/job-1", IfName: "net1"},
		})).To(Succeed())
		done := allocate(blue, "", blue.rng, "10.70.0.41", pod, "job00001")

		// Several passes of the reconciler, each past the test's grace.
		Consistently(cut.state, 2*grace+time.Second).Should(Equal("allocated=false reserved=true"))
		Expect(done.state()).To(Equal("allocated=true reserved=true"))

		pod.Status.Phase = corev1.PodSucceeded
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		Eventually(done.state).Should(Equal("allocated=false reserved=false"))
		Eventually(cut.state).Should(Equal("allocated=false reserved=false"))
		Expect(counter(reapedTotal, map[string]string{"network_name": "blue", "kind": "OverlappingRangeIPReservation", "reason": "PodFinished"})).To(BeNumerically(">=", 1))
		Expect(counter(reapedTotal, map[string]string{"network_name": "blue", "kind": "IPPoolAllocation", "reason": "PodFinished"})).To(BeNumerically(">=", 1))
	})

	It("reaps the addresses of a deleted Node's pods, which frees the Node's slice", func() {
		doomed := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-doomed"}}
		Expect(k8s.Create(ctx, doomed)).To(Succeed())
		var slice netip.Prefix
		free := int64(0)
		Eventually(func(g Gomega) {
			nsp := &nodeslicev1alpha1.NodeSlicePool{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: green.name}, nsp)).To(Succeed())
			for _, a := range nsp.Status.Allocations {
				if a.NodeName == doomed.Name {
					slice = netip.MustParsePrefix(a.SliceRange)
				}
			}
			g.Expect(slice.IsValid()).To(BeTrue())
			g.Expect(nsp.Status.FreeSlices).NotTo(BeNil())
			free = *nsp.Status.FreeSlices
		}).Should(Succeed())
		// The pod object stays (no pod garbage collector runs here): the Node is what went.
		pod := createPod("agent-x", doomed.Name)
		rec := allocate(green, doomed.Name, slice, slice.Addr().Next().String(), pod, "feed0001")

		Expect(k8s.Delete(ctx, doomed)).To(Succeed())
		Eventually(rec.state).Should(Equal("allocated=false reserved=false"))
		Expect(counter(reapedTotal, map[string]string{"network_name": "green", "kind": "IPPoolAllocation", "reason": "NodeGone"})).To(BeNumerically(">=", 1))
		By("the slice no IPPool holds any more is free again")
		Eventually(func() int64 {
			nsp := &nodeslicev1alpha1.NodeSlicePool{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: green.name}, nsp); err != nil || nsp.Status.FreeSlices == nil {
				return -1
			}
			return *nsp.Status.FreeSlices
		}).Should(Equal(free + 1))
	})

	It("never reaps an IPAMClaim's reservation", func() {
		_, claim := vmClaim("vm-1", red)
		var held *nodeslicev1alpha1.OverlappingRangeIPReservation
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
			g.Expect(claim.Status.IPs).To(HaveLen(1))
			held = &nodeslicev1alpha1.OverlappingRangeIPReservation{}
			name := red.reservationName(netip.MustParsePrefix(claim.Status.IPs[0]).Addr())
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: name}, held)).To(Succeed())
		}).Should(Succeed())

		By("a gone pod's address of the same network, seen since the same time, is reaped")
		ghost := createPod("ghost", node)
		rec := allocate(red, "", red.rng, "10.72.0.200", ghost, "dead0001")
		deletePod(ghost)
		Eventually(rec.state).Should(Equal("allocated=false reserved=false"))

		By("while the claim's reservation, whose podref names no pod, stays")
		after := &nodeslicev1alpha1.OverlappingRangeIPReservation{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(held), after)).To(Succeed())
		Expect(after.UID).To(Equal(held.UID))
	})

	It("puts back the reservation of a live pod that someone deleted, and says so", func() {
		pod := createPod("api-0", node)
		rec := allocate(blue, "", blue.rng, "10.70.0.20", pod, "beef0001")
		labels := map[string]string{"network_name": "blue", "holder": "Pod"}
		before := counter(restoredTotal, labels)
		o, err := rec.reservation()
		Expect(err).NotTo(HaveOccurred())

		// What whereabouts' DEL or its ip-control-loop does: delete by name.
		Expect(k8s.Delete(ctx, o)).To(Succeed())
		Eventually(func(g Gomega) {
			back, err := rec.reservation()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(back).NotTo(BeNil())
			g.Expect(back.UID).NotTo(Equal(o.UID))
			g.Expect(back.Spec).To(Equal(o.Spec))
			g.Expect(back.Annotations).To(HaveKeyWithValue(ipreconciler.AnnotationPodUID, string(pod.UID)))
		}).Should(Succeed())
		Eventually(eventNotes(appNS, pod.Name)).Should(ContainSubstring(ipreconciler.ReasonRestored + ": reservation cni-pools/blue-10.70.0.20 of address 10.70.0.20"))
		Expect(counter(restoredTotal, labels)).To(Equal(before + 1))
		Expect(rec.state()).To(Equal("allocated=true reserved=true"))
	})

	It("says once, on the pod and in a counter, when another holder's reservation names a live pod's address", func() {
		pod, other := createPod("twice-a", node), createPod("twice-b", node)
		rec := allocate(blue, "", blue.rng, "10.70.0.50", pod, "a0a0a001")
		labels := map[string]string{"network_name": "blue"}
		before := counter(heldTwiceTotal, labels)
		o, err := rec.reservation()
		Expect(err).NotTo(HaveOccurred())

		// The reservation now names another pod's container, as after a deletion and another
		// pool's ADD: the pool still records the address for the first pod.
		o.Spec = nodeslicev1alpha1.OverlappingRangeIPReservationSpec{ContainerID: "b0b0b001", PodRef: "apps/" + other.Name, IfName: "net1"}
		Expect(k8s.Update(ctx, o)).To(Succeed())
		Eventually(eventNotes(appNS, pod.Name)).Should(ContainSubstring(ipreconciler.ReasonHeldTwice +
			": address 10.70.0.50 is recorded for this pod (container a0a0a001, interface net1) in IPPool cni-pools/blue-10.70.0.0-24, but its reservation cni-pools/blue-10.70.0.50 is held by apps/twice-b (container b0b0b001)"))
		Expect(counter(heldTwiceTotal, labels)).To(Equal(before + 1))
		// Once per pair, however many passes see it; neither holder is moved.
		Consistently(func() float64 { return counter(heldTwiceTotal, labels) }, 2*grace+time.Second).Should(Equal(before + 1))
		Expect(rec.allocated()).To(BeTrue())
		back, err := rec.reservation()
		Expect(err).NotTo(HaveOccurred())
		Expect(back.UID).To(Equal(o.UID))
		Expect(back.Spec.ContainerID).To(Equal("b0b0b001"))
	})

	It("does not report a reservation that names the pod's holder", func() {
		pod := createPod("twice-c", node)
		before := counter(heldTwiceTotal, map[string]string{"network_name": "blue"})
		rec := allocate(blue, "", blue.rng, "10.70.0.51", pod, "c0c0c001")
		Consistently(func() float64 { return counter(heldTwiceTotal, map[string]string{"network_name": "blue"}) }, 2*grace+time.Second).Should(Equal(before))
		Expect(rec.state()).To(Equal("allocated=true reserved=true"))
	})

	It("puts back the reservation of an IPAMClaim that someone deleted", func() {
		vm, claim := vmClaim("vm-2", red)
		o := &nodeslicev1alpha1.OverlappingRangeIPReservation{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
			g.Expect(claim.Status.IPs).To(HaveLen(1))
			name := red.reservationName(netip.MustParsePrefix(claim.Status.IPs[0]).Addr())
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: name}, o)).To(Succeed())
		}).Should(Succeed())
		labels := map[string]string{"network_name": "red", "holder": "IPAMClaim"}
		claimLabels := map[string]string{"network_name": "red"}
		// Two controllers put it back: the claim's own (woken by the deletion) and this one;
		// whichever creates it counts it, once.
		restoredBoth := func() float64 {
			return counter(restoredTotal, labels) + counter("rackwire_ipamclaim_reservations_restored_total", claimLabels)
		}
		before := restoredBoth()

		// What whereabouts' ip-control-loop does to a podref that is not a pod.
		Expect(k8s.Delete(ctx, o)).To(Succeed())
		Eventually(func(g Gomega) {
			back := &nodeslicev1alpha1.OverlappingRangeIPReservation{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(o), back)).To(Succeed())
			g.Expect(back.UID).NotTo(Equal(o.UID))
			g.Expect(back.Spec.PodRef).To(Equal(appNS + "/" + claim.Name))
			g.Expect(back.Labels).To(HaveKeyWithValue(ipamclaim.LabelClaim, claim.Name))
		}).Should(Succeed())
		Eventually(eventNotes(appNS, claim.Name)).Should(ContainSubstring(ipreconciler.ReasonRestored))
		Eventually(restoredBoth).Should(Equal(before + 1))
		Consistently(restoredBoth, time.Second).Should(Equal(before + 1))

		By("deleting the VM and its claim (the garbage collector's part) releases the reservation for good: none is put back")
		Expect(k8s.Delete(ctx, vm)).To(Succeed())
		Expect(k8s.Delete(ctx, claim)).To(Succeed())
		Eventually(gone(claim)).Should(BeTrue())
		Eventually(gone(o)).Should(BeTrue())
	})
})
