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

package ipam_test

import (
	"fmt"
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
)

var _ = Describe("Metal3 IPClaims", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("share a pool of sparse ranges among many owners, each with its own address, name, owners and finalizer", func() {
		pool := newPool(ns, "sparse",
			rangeOf("192.168.0.10", "192.168.0.12", "192.168.0.0/24", "192.168.0.1"),
			ipamv1alpha1.Pool{Start: addr("10.1.0.100"), End: addr("10.1.0.101"), Subnet: subnet("10.1.0.0/16"),
				Prefix: 16, Gateway: addr("10.1.0.1"), DNSServers: []ipamv1alpha1.IPAddressStr{"10.1.0.2"}})
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		seen := map[string]string{}
		for i := range 5 {
			owner := &corev1.ConfigMap{}
			owner.Namespace, owner.Name = ns, fmt.Sprintf("owner-%d", i)
			Expect(k8s.Create(ctx, owner)).To(Succeed())
			c := newClaim(ns, fmt.Sprintf("claim-%d", i), "sparse")
			c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}
			Expect(k8s.Create(ctx, c)).To(Succeed())
		}
		for i := range 5 {
			name := fmt.Sprintf("claim-%d", i)
			ip := boundAddress(ns, name)
			a := netip.MustParseAddr(string(ip.Spec.Address))
			Expect(seen).NotTo(HaveKey(a.String()), "address given twice")
			seen[a.String()] = name
			Expect(ip.Name).To(Equal(ipam.AddressName("sparse", a)))
			Expect(ip.Finalizers).To(ConsistOf(ipam.AddressFinalizer))
			Expect(ip.Labels).To(HaveKeyWithValue(ipam.PoolLabel, "sparse"))
			Expect(ip.Spec.Claim.Name).To(Equal(name))
			Expect(ip.Spec.Pool.Name).To(Equal("sparse"))
			var kinds []string
			for _, o := range ip.OwnerReferences {
				kinds = append(kinds, o.Kind)
				if o.Kind == "IPClaim" {
					Expect(o.Controller).To(HaveValue(BeTrue()))
					Expect(o.Name).To(Equal(name))
				}
			}
			Expect(kinds).To(ConsistOf("IPPool", "IPClaim"))
			if netip.MustParsePrefix("10.1.0.0/16").Contains(a) {
				Expect(ip.Spec.Prefix).To(BeEquivalentTo(16))
				Expect(ip.Spec.Gateway).To(HaveValue(BeEquivalentTo("10.1.0.1")))
				Expect(ip.Spec.DNSServers).To(ConsistOf(BeEquivalentTo("10.1.0.2")))
			} else {
				Expect(ip.Spec.Prefix).To(BeEquivalentTo(24))
				Expect(ip.Spec.Gateway).To(HaveValue(BeEquivalentTo("192.168.0.1")))
			}
		}
		Expect(seen).To(HaveLen(5))

		By("re-creating the IPAddress with the same name and values when someone deletes it while its claim lives")
		ip := boundAddress(ns, "claim-0")
		old := ip.DeepCopy()
		Expect(k8s.Delete(ctx, ip)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &ipamv1alpha1.IPAddress{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(old), got)).To(Succeed())
			g.Expect(got.UID).NotTo(Equal(old.UID))
			g.Expect(got.DeletionTimestamp).To(BeNil())
			g.Expect(got.Spec).To(Equal(old.Spec))
			g.Expect(got.OwnerReferences).To(Equal(old.OwnerReferences))
		}).Should(Succeed())
		Expect(boundAddress(ns, "claim-0").Name).To(Equal(old.Name))

		By("releasing it when the claim goes")
		Expect(k8s.Delete(ctx, newClaim(ns, "claim-0", "sparse"))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(ip), ip))
		}).Should(BeTrue())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, key(ns, "claim-0"), &ipamv1alpha1.IPClaim{}))
		}).Should(BeTrue())
	})

	It("honour pre-allocations before the claim exists, a requested address, and report conflicts", func() {
		pool := newPool(ns, "pre", rangeOf("192.168.0.8", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		pool.Spec.PreAllocations = map[string]ipamv1alpha1.IPAddressStr{"renderdata-9": "192.168.0.8"}
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "pre")(g).Indexes).To(HaveKeyWithValue("renderdata-9", "192.168.0.8"))
		}).Should(Succeed())

		By("not handing the pre-allocated address to another claim, even lowest-first")
		Expect(k8s.Create(ctx, newClaim(ns, "first", "pre"))).To(Succeed())
		Expect(boundAddress(ns, "first").Spec.Address).To(BeEquivalentTo("192.168.0.9"))

		By("giving the pre-allocated claim its address")
		Expect(k8s.Create(ctx, newClaim(ns, "renderdata-9", "pre"))).To(Succeed())
		Expect(boundAddress(ns, "renderdata-9").Spec.Address).To(BeEquivalentTo("192.168.0.8"))

		By("giving a claim the address its annotation asks for")
		asks := newClaim(ns, "asks", "pre")
		asks.Annotations = map[string]string{ipam.RequestedAddressAnnotation: "192.168.0.11"}
		Expect(k8s.Create(ctx, asks)).To(Succeed())
		Expect(boundAddress(ns, "asks").Spec.Address).To(BeEquivalentTo("192.168.0.11"))

		By("refusing an address held by another claim, with a clear message")
		taken := newClaim(ns, "taken", "pre")
		taken.Annotations = map[string]string{ipam.RequestedAddressAnnotation: "192.168.0.9"}
		Expect(k8s.Create(ctx, taken)).To(Succeed())
		Eventually(claimReady(ns, "taken")).Should(And(
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", ipam.ReasonAllocationFailed),
			HaveField("Message", ContainSubstring("192.168.0.9 is already held by IPClaim first"))))
		c := &ipamv1alpha1.IPClaim{}
		Expect(k8s.Get(ctx, key(ns, "taken"), c)).To(Succeed())
		Expect(c.Status.ErrorMessage).To(HaveValue(ContainSubstring("already held")))

		By("refusing an address pre-allocated to someone else")
		other := newClaim(ns, "other", "pre")
		other.Annotations = map[string]string{ipam.RequestedAddressAnnotation: "192.168.0.8"}
		Expect(k8s.Create(ctx, other)).To(Succeed())
		Eventually(claimReady(ns, "other")).Should(HaveField("Message", ContainSubstring("IPClaim renderdata-9")))

		By("refusing an address outside the pool")
		outside := newClaim(ns, "outside", "pre")
		outside.Annotations = map[string]string{ipam.RequestedAddressAnnotation: "10.9.9.9"}
		Expect(k8s.Create(ctx, outside)).To(Succeed())
		Eventually(claimReady(ns, "outside")).Should(HaveField("Message", ContainSubstring("not an address the pool hands out")))
	})

	It("pick lowest-first by default (set on create), randomly on request, and never hand out gateway, network or broadcast", func() {
		random := newPool(ns, "random", ipamv1alpha1.Pool{Subnet: subnet("10.0.0.0/28"), Gateway: addr("10.0.0.1"), Prefix: 28})
		random.Spec.AllocationStrategy = ipamv1alpha1.AllocationRandom
		Expect(k8s.Create(ctx, random)).To(Succeed())
		seq := newPool(ns, "seq", ipamv1alpha1.Pool{Subnet: subnet("10.0.1.0/28"), Gateway: addr("10.0.1.1"), Prefix: 28})
		Expect(k8s.Create(ctx, seq)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(seq), seq)).To(Succeed())
		Expect(seq.Spec.AllocationStrategy).To(Equal(ipamv1alpha1.AllocationSequential))

		By("not defaulting the strategy on an update: a pool stored without one stays without one")
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(seq), seq); err != nil {
				return err
			}
			seq.Spec.AllocationStrategy = ""
			return k8s.Update(ctx, seq)
		}).Should(Succeed())
		Expect(seq.Spec.AllocationStrategy).To(BeEmpty())

		// 13 usable addresses in each: .2 to .14.
		for i := range 13 {
			Expect(k8s.Create(ctx, newClaim(ns, fmt.Sprintf("r-%d", i), "random"))).To(Succeed())
		}
		got := map[string]bool{}
		for i := range 13 {
			got[string(boundAddress(ns, fmt.Sprintf("r-%d", i)).Spec.Address)] = true
		}
		Expect(got).To(HaveLen(13))
		Expect(got).NotTo(HaveKey("10.0.0.0"))
		Expect(got).NotTo(HaveKey("10.0.0.1"))
		Expect(got).NotTo(HaveKey("10.0.0.15"))

		for i := range 3 {
			name := fmt.Sprintf("s-%d", i)
			Expect(k8s.Create(ctx, newClaim(ns, name, "seq"))).To(Succeed())
			// One at a time, so that lowest-first is observable.
			Expect(boundAddress(ns, name).Spec.Address).To(BeEquivalentTo(fmt.Sprintf("10.0.1.%d", i+2)))
		}
	})

	It("keep the pool status: allocations, counts, Ready, lastUpdated only on change, and hold deletion while addresses exist", func() {
		pool := newPool(ns, "status", rangeOf("192.168.0.10", "192.168.0.13", "192.168.0.0/24", "192.168.0.1"))
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "a", "status"))).To(Succeed())
		ip := boundAddress(ns, "a")
		var st ipamv1alpha1.IPPoolStatus
		Eventually(func(g Gomega) {
			st = poolStatus(ns, "status")(g)
			g.Expect(st.Indexes).To(Equal(map[string]string{"a": string(ip.Spec.Address)}))
			g.Expect(st.Usage).To(HaveValue(Equal(ipamv1alpha1.IPPoolUsage{Total: 4, Used: 1, Free: 3, Size: "4", FreeSize: "3"})))
			g.Expect(st.Conditions).To(ContainElement(And(HaveField("Type", ipamv1alpha1.ConditionReady), HaveField("Status", metav1.ConditionTrue))))
			g.Expect(st.LastUpdated).NotTo(BeNil())
		}).Should(Succeed())

		// The claim's binding may take two status writes; the mark to compare with is the
		// settled one.
		Eventually(func(g Gomega) {
			before := poolStatus(ns, "status")(g).LastUpdated
			time.Sleep(time.Second)
			after := poolStatus(ns, "status")(g).LastUpdated
			g.Expect(after.Equal(before)).To(BeTrue())
			st.LastUpdated = after
		}).Should(Succeed())

		By("not touching lastUpdated when the allocations did not change")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
		pool.Spec.DNSServers = []ipamv1alpha1.IPAddressStr{"8.8.8.8"}
		Expect(k8s.Update(ctx, pool)).To(Succeed())
		Eventually(func(g Gomega) int64 { return poolStatus(ns, "status")(g).ObservedGeneration }).Should(Equal(pool.Generation))
		Expect(poolStatus(ns, "status")(Default).LastUpdated.Equal(st.LastUpdated)).To(BeTrue())

		By("labelling the pool for clusterctl move")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
		pool.Spec.ClusterName = ptr.To("cluster-status")
		Expect(k8s.Update(ctx, pool)).To(Succeed())
		Eventually(func(g Gomega) map[string]string {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
			return pool.Labels
		}).Should(HaveKeyWithValue(ipam.ClusterNameLabel, "cluster-status"))

		By("waiting with the deletion of the pool until its addresses are released")
		Expect(k8s.Delete(ctx, pool)).To(Succeed())
		Eventually(func(g Gomega) {
			cond := poolStatus(ns, "status")(g).Conditions
			g.Expect(cond).To(ContainElement(HaveField("Reason", ipam.ReasonDeleting)))
		}).Should(Succeed())
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool) }, 2*time.Second).Should(Succeed())
		Expect(k8s.Delete(ctx, newClaim(ns, "a", "status"))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)) }).Should(BeTrue())
	})

	It("report an exhausted pool, and retry by themselves when an address is freed or the pool grows", func() {
		pool := newPool(ns, "tiny", rangeOf("192.168.0.10", "192.168.0.10", "192.168.0.0/24", "192.168.0.1"))
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "one", "tiny"))).To(Succeed())
		boundAddress(ns, "one")
		Expect(k8s.Create(ctx, newClaim(ns, "two", "tiny"))).To(Succeed())
		Eventually(claimReady(ns, "two")).Should(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", ipam.ReasonPoolExhausted)))
		Eventually(func() []string { return eventReasons(ns, "two") }).Should(ContainElement(ipam.ReasonPoolExhausted))
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "tiny")(g).Conditions).To(ContainElement(HaveField("Reason", ipam.ReasonPoolExhausted)))
		}).Should(Succeed())
		Eventually(func() []string { return eventReasons(ns, "tiny") }).Should(ContainElement(ipam.ReasonPoolExhausted))

		By("binding the waiting claim once an address is freed")
		Expect(k8s.Delete(ctx, newClaim(ns, "one", "tiny"))).To(Succeed())
		Expect(boundAddress(ns, "two").Spec.Address).To(BeEquivalentTo("192.168.0.10"))

		By("binding the next waiting claim once the pool grows")
		Expect(k8s.Create(ctx, newClaim(ns, "three", "tiny"))).To(Succeed())
		Eventually(claimReady(ns, "three")).Should(HaveField("Reason", ipam.ReasonPoolExhausted))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
		pool.Spec.Pools[0].End = addr("192.168.0.11")
		Expect(k8s.Update(ctx, pool)).To(Succeed())
		Expect(boundAddress(ns, "three").Spec.Address).To(BeEquivalentTo("192.168.0.11"))
	})

	It("allocate and release nothing while their cluster is paused", func() {
		cluster := &unstructured.Unstructured{}
		cluster.SetAPIVersion("cluster.x-k8s.io/v1beta2")
		cluster.SetKind("Cluster")
		cluster.SetNamespace(ns)
		cluster.SetName("paused-cluster")
		Expect(unstructured.SetNestedField(cluster.Object, true, "spec", "paused")).To(Succeed())
		Expect(k8s.Create(ctx, cluster)).To(Succeed())
		pool := newPool(ns, "paused", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.ClusterName = ptr.To("paused-cluster")
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "waits", "paused"))).To(Succeed())
		Consistently(func(g Gomega) {
			c := &ipamv1alpha1.IPClaim{}
			g.Expect(k8s.Get(ctx, key(ns, "waits"), c)).To(Succeed())
			g.Expect(c.Status.Address).To(BeNil())
		}, 3*time.Second).Should(Succeed())

		By("allocating once the cluster is unpaused")
		Expect(unstructured.SetNestedField(cluster.Object, false, "spec", "paused")).To(Succeed())
		Expect(k8s.Update(ctx, cluster)).To(Succeed())
		ip := boundAddress(ns, "waits")

		By("not releasing while the claim carries the paused annotation")
		c := &ipamv1alpha1.IPClaim{}
		Expect(k8s.Get(ctx, key(ns, "waits"), c)).To(Succeed())
		c.Annotations = map[string]string{ipam.PausedAnnotation: ""}
		Expect(k8s.Update(ctx, c)).To(Succeed())
		Expect(k8s.Delete(ctx, c)).To(Succeed())
		Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(ip), ip) }, 3*time.Second).Should(Succeed())
		Expect(k8s.Get(ctx, key(ns, "waits"), c)).To(Succeed())
		c.Annotations = nil
		Expect(k8s.Update(ctx, c)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(ip), ip)) }).Should(BeTrue())
	})

	It("lose nothing when the pool status is lost (clusterctl move), and count external addresses", func() {
		createCluster(ns, "cluster-1", false)
		pool := newPool(ns, "moved", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.ClusterName = ptr.To("cluster-1")
		pool.Spec.PreAllocations = map[string]ipamv1alpha1.IPAddressStr{"later": "192.168.0.20"}
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Eventually(func(g Gomega) map[string]string {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
			return pool.Labels
		}).Should(HaveKeyWithValue(ipam.ClusterNameLabel, "cluster-1"))

		By("reserving an address whose IPAddress was made outside rackwire")
		ext := &ipamv1alpha1.IPAddress{}
		ext.Namespace, ext.Name = ns, "moved-192-168-0-15"
		ext.Spec = ipamv1alpha1.IPAddressSpec{
			Address: "192.168.0.15", Prefix: 24,
			Pool:  corev1.ObjectReference{Name: "moved"},
			Claim: corev1.ObjectReference{Name: "external-bmc"},
		}
		Expect(k8s.Create(ctx, ext)).To(Succeed())
		for i := range 4 {
			Expect(k8s.Create(ctx, newClaim(ns, fmt.Sprintf("m-%d", i), "moved"))).To(Succeed())
		}
		for i := range 4 {
			Expect(boundAddress(ns, fmt.Sprintf("m-%d", i)).Spec.Address).NotTo(BeEquivalentTo("192.168.0.15"))
		}
		var before ipamv1alpha1.IPPoolStatus
		Eventually(func(g Gomega) {
			before = poolStatus(ns, "moved")(g)
			g.Expect(before.Indexes).To(HaveLen(6)) // 4 claims, the external address, the pre-allocation
			g.Expect(before.Indexes).To(HaveKeyWithValue("external-bmc", "192.168.0.15"))
			g.Expect(before.Usage).To(HaveValue(Equal(ipamv1alpha1.IPPoolUsage{Total: 11, Used: 6, Free: 5, Size: "11", FreeSize: "5"})))
		}).Should(Succeed())

		By("rebuilding the status from the IPAddresses after it is wiped")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
		pool.Status = ipamv1alpha1.IPPoolStatus{}
		Expect(k8s.Status().Update(ctx, pool)).To(Succeed())
		Eventually(func(g Gomega) {
			after := poolStatus(ns, "moved")(g)
			g.Expect(after.Indexes).To(Equal(before.Indexes))
			g.Expect(after.Usage).To(Equal(before.Usage))
		}).Should(Succeed())
	})
})
