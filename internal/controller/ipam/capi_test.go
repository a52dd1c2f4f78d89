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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/controller/ipam"
)

var _ = Describe("Cluster API IPAddressClaims", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("get an IPAddress named after its address, owned by the claim and the pool, protected, referenced and Ready", func() {
		Expect(k8s.Create(ctx, newPool(ns, "capi", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "machine-1-eth0", "capi"))).To(Succeed())
		ip := boundCAPIAddress(ns, "machine-1-eth0")
		Expect(ip.Name).To(Equal(ipam.AddressName("capi", netip.MustParseAddr(ip.Spec.Address))))
		Expect(ip.Spec.ClaimRef.Name).To(Equal("machine-1-eth0"))
		Expect(ip.Spec.PoolRef).To(Equal(capiipamv1beta2.IPPoolReference{APIGroup: "ipam.metal3.io", Kind: "IPPool", Name: "capi"}))
		Expect(ip.Spec.Prefix).To(HaveValue(BeEquivalentTo(24)))
		Expect(ip.Spec.Gateway).To(Equal("192.168.0.1"))
		Expect(ip.Finalizers).To(ConsistOf(ipam.CAPIAddressFinalizer))
		Expect(ip.Labels).To(HaveKeyWithValue(ipam.PoolLabel, "capi"))
		Expect(ip.OwnerReferences).To(ContainElements(
			And(HaveField("Kind", "IPAddressClaim"), HaveField("Name", "machine-1-eth0"), HaveField("Controller", HaveValue(BeTrue()))),
			And(HaveField("Kind", "IPPool"), HaveField("Name", "capi"), HaveField("BlockOwnerDeletion", HaveValue(BeTrue())))))
		c := &capiipamv1beta2.IPAddressClaim{}
		Expect(k8s.Get(ctx, key(ns, "machine-1-eth0"), c)).To(Succeed())
		Expect(c.Finalizers).To(ConsistOf(ipam.CAPIClaimFinalizer))
		Eventually(capiClaimReady(ns, "machine-1-eth0")).Should(HaveField("Status", metav1.ConditionTrue))

		By("re-creating the IPAddress with the same values when it is deleted while the claim lives")
		old := ip.DeepCopy()
		Expect(k8s.Delete(ctx, ip)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &capiipamv1beta2.IPAddress{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(old), got)).To(Succeed())
			g.Expect(got.UID).NotTo(Equal(old.UID))
			g.Expect(got.DeletionTimestamp).To(BeNil())
			g.Expect(got.Spec).To(Equal(old.Spec))
		}).Should(Succeed())

		By("releasing the address when the claim is deleted")
		Expect(k8s.Delete(ctx, newCAPIClaim(ns, "machine-1-eth0", "capi"))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(old), ip)) }).Should(BeTrue())
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "capi")(g).Indexes).To(BeEmpty())
			g.Expect(poolStatus(ns, "capi")(g).Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(0))))
		}).Should(Succeed())
	})

	It("honour the ipAddress annotation and copy the claim's labels, as ip-address-manager does", func() {
		Expect(k8s.Create(ctx, newPool(ns, "asked", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		c := newCAPIClaim(ns, "wants-15", "asked")
		c.Annotations = map[string]string{ipam.RequestedAddressAnnotation: "192.168.0.15"}
		c.Labels = map[string]string{"cluster.x-k8s.io/deployment-name": "md-0"}
		Expect(k8s.Create(ctx, c)).To(Succeed())
		ip := boundCAPIAddress(ns, "wants-15")
		Expect(ip.Spec.Address).To(Equal("192.168.0.15"))
		Expect(ip.Name).To(Equal("asked-192-168-0-15"))
		Expect(ip.Labels).To(HaveKeyWithValue("cluster.x-k8s.io/deployment-name", "md-0"))
	})

	It("leave claims of other providers alone", func() {
		Expect(k8s.Create(ctx, newPool(ns, "capi", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		foreign := newCAPIClaim(ns, "foreign", "capi")
		foreign.Spec.PoolRef.APIGroup, foreign.Spec.PoolRef.Kind = "ipam.cluster.x-k8s.io", "InClusterIPPool"
		Expect(k8s.Create(ctx, foreign)).To(Succeed())
		Consistently(func(g Gomega) {
			c := &capiipamv1beta2.IPAddressClaim{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(foreign), c)).To(Succeed())
			g.Expect(c.Finalizers).To(BeEmpty())
			g.Expect(c.Status.Conditions).To(BeEmpty())
		}, 3*time.Second).Should(Succeed())
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(foreign), &capiipamv1beta2.IPAddress{}))).To(BeTrue())
	})

	It("share one address space with Metal3 claims, and fail with the contract's reasons", func() {
		Expect(k8s.Create(ctx, newPool(ns, "shared", rangeOf("192.168.0.10", "192.168.0.13", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		for i := range 2 {
			Expect(k8s.Create(ctx, newClaim(ns, fmt.Sprintf("m3-%d", i), "shared"))).To(Succeed())
			Expect(k8s.Create(ctx, newCAPIClaim(ns, fmt.Sprintf("capi-%d", i), "shared"))).To(Succeed())
		}
		seen := map[string]bool{}
		for i := range 2 {
			seen[string(boundAddress(ns, fmt.Sprintf("m3-%d", i)).Spec.Address)] = true
			seen[boundCAPIAddress(ns, fmt.Sprintf("capi-%d", i)).Spec.Address] = true
		}
		Expect(seen).To(HaveLen(4))

		Expect(k8s.Create(ctx, newCAPIClaim(ns, "one-too-many", "shared"))).To(Succeed())
		Eventually(capiClaimReady(ns, "one-too-many")).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", capiipamv1beta2.IPAddressClaimReadyPoolExhaustedReason)))
		Eventually(func() []string { return eventReasons(ns, "one-too-many") }).Should(ContainElement(ipam.ReasonPoolExhausted))

		By("binding it once a Metal3 claim frees an address")
		Expect(k8s.Delete(ctx, newClaim(ns, "m3-0", "shared"))).To(Succeed())
		boundCAPIAddress(ns, "one-too-many")

		Expect(k8s.Create(ctx, newCAPIClaim(ns, "no-pool", "missing"))).To(Succeed())
		Eventually(capiClaimReady(ns, "no-pool")).Should(HaveField("Reason", capiipamv1beta2.IPAddressClaimReadyPoolNotReadyReason))

	})
})
