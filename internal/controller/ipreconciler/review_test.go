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
	"fmt"
	"net/netip"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler/holder"
)

// allocateOnly writes a pool entry without a reservation, as a binary with
// enable_overlapping_ranges: false does.
func allocateOnly(n network, poolRange netip.Prefix, addr string, pod *corev1.Pod, containerID string) record {
	a := netip.MustParseAddr(addr)
	rec := record{net: n, poolRange: poolRange, addr: a, pool: cniconf.PoolName(n.name, "", poolRange),
		alloc: nodeslicev1alpha1.IPAllocation{ContainerID: containerID, PodRef: pod.Namespace + "/" + pod.Name, IfName: "net1"}}
	key, ok := holder.Offset(poolRange, a)
	ExpectWithOffset(1, ok).To(BeTrue())
	pool := &nodeslicev1alpha1.IPPool{ObjectMeta: metav1.ObjectMeta{Name: rec.pool, Namespace: poolNS}}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
		pool.Spec = nodeslicev1alpha1.IPPoolSpec{Range: poolRange.String(), Allocations: map[string]nodeslicev1alpha1.IPAllocation{key: rec.alloc}}
		ExpectWithOffset(1, k8s.Create(ctx, pool)).To(Succeed())
		return rec
	}
	patch := fmt.Appendf(nil, `{"spec":{"allocations":{%q:{"id":%q,"podref":%q,"ifname":"net1"}}}}`, key, containerID, rec.alloc.PodRef)
	ExpectWithOffset(1, k8s.Patch(ctx, pool, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
	return rec
}

var _ = Describe("The IP reconciler, under review, on a network without reservations", Ordered, func() {
	amber := network{name: "amber", rng: netip.MustParsePrefix("10.73.0.0/24")}

	BeforeAll(func() {
		amber.createNAD(false, `,"enable_overlapping_ranges":false`)
		// Only a manager told that Multus alone writes network-status reads it.
		DeferCleanup(trustingReconciler())
	})

	// A network without reservations (enable_overlapping_ranges: false): a pod's DEL never
	// came (its node crashed) and the StatefulSet re-created the pod under its name with
	// another sandbox. Nothing but the name ties the old entry to a pod, and the name is
	// not an identity: the old entry must be reaped, not kept for the new pod forever. What
	// tells them apart is the pod's network-status annotation (Multus writes it after the
	// ADD, and whereabouts' own reconciler reads it): it lists the new sandbox's address on
	// the interface, which the pool records for the pod under the other container. Anyone
	// who may update the pod can write it too, so it is read only where the infra team
	// vouches that Multus alone can (--ip-reconciler-trust-network-status, with
	// config/cni/network-status-policy applied); the spec under review 24 is the default's.
	It("reaps the entry of an earlier pod of the name on a network without reservations", func() {
		old := createPod("amber-0", node)
		stale := allocateOnly(amber, amber.rng, "10.73.0.5", old, "amb0ld01")
		deletePod(old)
		renewed := createPod("amber-0", node)
		fresh := allocateOnly(amber, amber.rng, "10.73.0.6", renewed, "amb0new1")
		renewed.Annotations = map[string]string{"k8s.v1.cni.cncf.io/network-status": `[{"name":"` + appNS + `/amber","interface":"net1","ips":["10.73.0.6"],"mac":"0a:58:0a:49:00:06"}]`}
		Expect(k8s.Update(ctx, renewed)).To(Succeed())
		Eventually(stale.allocated, 6*grace+5*time.Second).Should(BeFalse(),
			"the entry of container amb0ld01 (the earlier amber-0) is kept for the re-created pod: leaked for its lifetime")
		Expect(fresh.allocated()).To(BeTrue())
	})
})

var _ = Describe("The IP reconciler, under review, with a network_name reused", Ordered, func() {
	teal := network{name: "teal", rng: netip.MustParsePrefix("10.74.0.0/24")}

	BeforeAll(func() { teal.createNAD(false, "") })

	// Another tenant's NAD names the same network_name with another range and turns
	// enable_overlapping_ranges off: that must not stop the put-back of teal's reservations,
	// whose range it does not even cover.
	It("puts back a live pod's reservation on a network whose network_name another NAD with another range reuses", func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "evil"}})).To(Succeed())
		Expect(k8s.Create(ctx, &nadv1.NetworkAttachmentDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: "evil"},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"copy","type":"bridge","ipam":` +
				`{"type":"rackwire","range":"10.99.0.0/24","network_name":"teal","enable_overlapping_ranges":false}}`},
		})).To(Succeed())
		pod := createPod("teal-0", node)
		rec := allocate(teal, "", teal.rng, "10.74.0.20", pod, "tea10001")
		o, err := rec.reservation()
		Expect(err).NotTo(HaveOccurred())
		// The reconciler's cache must hold the other NAD before the reservation goes.
		time.Sleep(2 * time.Second)
		Expect(k8s.Delete(ctx, o)).To(Succeed())
		Eventually(rec.state, 6*grace+5*time.Second).Should(Equal("allocated=true reserved=true"),
			"teal's reservation is not put back: a NAD of another namespace and range turned the put-back off for network_name teal")
	})
})

var _ = Describe("The IP reconciler, under review, starting after a reservation went", Ordered, func() {
	plum := network{name: "plum", rng: netip.MustParsePrefix("10.75.0.0/24")}

	BeforeAll(func() { plum.createNAD(false, "") })

	// While the manager was down: pod cache-9's ADD wrote its entry and reservation,
	// whereabouts' ip-control-loop deleted the reservation, the node crashed (no DEL), and
	// the StatefulSet re-created cache-9 elsewhere. The manager starting then knows nothing
	// of the deleted reservation: the entry's container is not the new pod's, and putting
	// its reservation back stamps the new pod's UID on the earlier pod's address.
	It("does not put back, for the pod re-created under the name, the reservation of an earlier pod's entry it never saw", func() {
		old := createPod("cache-9", node)
		deletePod(old)
		renewed := createPod("cache-9", node)
		fresh := allocate(plum, "", plum.rng, "10.75.0.11", renewed, "plumnew1")
		stale := allocateOnly(plum, plum.rng, "10.75.0.10", old, "plum0ld1")
		Consistently(func() string {
			o, err := stale.reservation()
			if err != nil || o == nil {
				return fmt.Sprint(err)
			}
			return "put back for pod UID " + o.Annotations["rackwire.metal3.io/pod-uid"] + " (the re-created pod is " + string(renewed.UID) + ")"
		}, 2*grace+2*time.Second).Should(Equal("<nil>"))
		Eventually(stale.allocated, 6*grace+5*time.Second).Should(BeFalse())
		Expect(fresh.state()).To(Equal("allocated=true reserved=true"))
	})
})

var _ = Describe("The IP reconciler, under review, with a Node re-created under its name", Ordered, func() {
	sand := network{name: "sand", rng: netip.MustParsePrefix("10.76.0.0/24")}

	BeforeAll(func() { sand.createNAD(false, "") })

	// Node worker-9 is deleted and a new machine registers under the same name before the
	// pods bound to it are collected: the kubelet there starts pod db-9 again (same pod, same
	// UID) in a new sandbox, whose ADD takes another address. The old sandbox's DEL never
	// comes (its machine is gone). One interface of one pod holds one address of a network:
	// the old sandbox's entry must go, not stay for as long as the pod lives.
	It("reaps the entry of a pod's earlier sandbox once the same pod's new sandbox holds one", func() {
		n9 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-9"}}
		Expect(k8s.Create(ctx, n9)).To(Succeed())
		pod := createPod("db-9", n9.Name)
		stale := allocate(sand, "", sand.rng, "10.76.0.5", pod, "sandold1")
		o, err := stale.reservation()
		Expect(err).NotTo(HaveOccurred())
		// A new machine registers well after the old sandbox started (creation times are
		// stamped to the second).
		Eventually(func() bool { return time.Now().After(o.CreationTimestamp.Add(time.Second + 100*time.Millisecond)) }).Should(BeTrue())
		Expect(k8s.Delete(ctx, n9)).To(Succeed())
		Expect(k8s.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-9"}})).To(Succeed())
		fresh := allocate(sand, "", sand.rng, "10.76.0.6", pod, "sandnew1")
		Eventually(stale.state, 6*grace+5*time.Second).Should(Equal("allocated=false reserved=false"),
			"the entry of pod db-9's earlier sandbox is kept beside its new sandbox's: leaked while the pod lives")
		Expect(fresh.state()).To(Equal("allocated=true reserved=true"))
	})
})
