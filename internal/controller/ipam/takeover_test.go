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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// The objects below are what metal3-io/ip-address-manager writes (ipam/ippool_manager.go):
// its finalizers, IPAddresses of both kinds named <namePrefix>-<address>, owner references
// to the pool and the claim without the controller flag, the claim's labels copied, and
// the pool's status.indexes.
var _ = Describe("taking over from ip-address-manager", func() {
	It("adopts what it wrote: no second IPAddress, upstream finalizers released, used 0 and nothing left at the end", func() {
		ns := newNamespace()
		cluster := createCluster(ns, "upstream", true)

		pool := newPool(ns, "pool1", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.NamePrefix = "test1-prov"
		pool.Spec.ClusterName = ptr.To("upstream")
		pool.Spec.AllocationStrategy = "" // written before the field existed
		pool.Finalizers = []string{"ippool.ipam.metal3.io"}
		pool.Labels = map[string]string{"cluster.x-k8s.io/cluster-name": "upstream", "cluster.x-k8s.io/provider": "ipam-metal3"}
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		poolRef := metav1.OwnerReference{APIVersion: "ipam.metal3.io/v1alpha1", Kind: "IPPool", Name: "pool1", UID: pool.UID}

		m3claim := newClaim(ns, "machine-0-provisioning", "pool1")
		m3claim.Finalizers = []string{"ipclaim.ipam.metal3.io", "metal3data.infrastructure.cluster.x-k8s.io"}
		m3claim.Labels = map[string]string{"cluster.x-k8s.io/cluster-name": "upstream", "infrastructure.cluster.x-k8s.io/data-name": "d0"}
		Expect(k8s.Create(ctx, m3claim)).To(Succeed())
		m3addr := &ipamv1alpha1.IPAddress{}
		m3addr.Namespace, m3addr.Name = ns, "test1-prov-192-168-0-10"
		m3addr.Finalizers = []string{"ipaddress.ipam.metal3.io"}
		m3addr.Labels = m3claim.Labels
		m3addr.OwnerReferences = []metav1.OwnerReference{poolRef,
			{APIVersion: "ipam.metal3.io/v1alpha1", Kind: "IPClaim", Name: m3claim.Name, UID: m3claim.UID}}
		m3addr.Spec = ipamv1alpha1.IPAddressSpec{Address: "192.168.0.10", Prefix: 24, Gateway: addr("192.168.0.1"),
			Pool: corev1.ObjectReference{Name: "pool1", Namespace: ns}, Claim: corev1.ObjectReference{Name: m3claim.Name, Namespace: ns}}
		Expect(k8s.Create(ctx, m3addr)).To(Succeed())
		// The paused cluster's objects still get the controllers' writes (a label, a
		// condition): each status is written from a fresh read until it lands.
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(m3claim), m3claim); err != nil {
				return err
			}
			m3claim.Status.Address = &corev1.ObjectReference{Name: m3addr.Name, Namespace: ns}
			return k8s.Status().Update(ctx, m3claim)
		}).Should(Succeed())

		capiClaim := newCAPIClaim(ns, "machine-0-eth1", "pool1")
		capiClaim.Finalizers = []string{"ipam.metal3.io/ipaddressclaim"}
		Expect(k8s.Create(ctx, capiClaim)).To(Succeed())
		capiAddr := &capiipamv1beta2.IPAddress{}
		capiAddr.Namespace, capiAddr.Name = ns, "test1-prov-192-168-0-11"
		capiAddr.Finalizers = []string{"ipam.metal3.io/ipaddress"}
		capiAddr.OwnerReferences = []metav1.OwnerReference{poolRef,
			{APIVersion: "ipam.cluster.x-k8s.io/v1beta2", Kind: "IPAddressClaim", Name: capiClaim.Name, UID: capiClaim.UID}}
		capiAddr.Spec = capiipamv1beta2.IPAddressSpec{Address: "192.168.0.11", Prefix: ptr.To[int32](24), Gateway: "192.168.0.1",
			PoolRef: capiClaim.Spec.PoolRef, ClaimRef: capiipamv1beta2.IPAddressClaimReference{Name: capiClaim.Name}}
		Expect(k8s.Create(ctx, capiAddr)).To(Succeed())
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(capiClaim), capiClaim); err != nil {
				return err
			}
			capiClaim.Status.AddressRef = capiipamv1beta2.IPAddressReference{Name: capiAddr.Name}
			capiClaim.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()}}
			return k8s.Status().Update(ctx, capiClaim)
		}).Should(Succeed())

		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
				return err
			}
			pool.Status.Indexes = map[string]string{m3claim.Name: "192.168.0.10", capiClaim.Name: "192.168.0.11"}
			return k8s.Status().Update(ctx, pool)
		}).Should(Succeed())

		By("unpausing: the adopted claims keep their one address each")
		setClusterPaused(cluster, false)
		Expect(boundAddress(ns, m3claim.Name).Name).To(Equal(m3addr.Name))
		Expect(boundCAPIAddress(ns, capiClaim.Name).Name).To(Equal(capiAddr.Name))
		Consistently(func(g Gomega) {
			m3, _ := claimAddresses(ns, m3claim.Name)
			_, capi := claimAddresses(ns, capiClaim.Name)
			g.Expect(m3).To(HaveLen(1))
			g.Expect(capi).To(HaveLen(1))
		}, 3*time.Second).Should(Succeed())
		By("a new claim gets an address neither adopted claim holds, lowest first as upstream pools without a strategy do")
		Expect(k8s.Create(ctx, newClaim(ns, "machine-1-provisioning", "pool1"))).To(Succeed())
		Expect(boundAddress(ns, "machine-1-provisioning").Spec.Address).To(BeEquivalentTo("192.168.0.12"))
		Eventually(func(g Gomega) {
			st := poolStatus(ns, "pool1")(g)
			g.Expect(st.Indexes).To(Equal(map[string]string{m3claim.Name: "192.168.0.10", capiClaim.Name: "192.168.0.11",
				"machine-1-provisioning": "192.168.0.12"}))
			g.Expect(st.Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(3))))
		}).Should(Succeed())

		By("deleting every claim: the upstream finalizers go too, used drops to 0 and no object is left")
		Expect(k8s.DeleteAllOf(ctx, &ipamv1alpha1.IPClaim{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8s.DeleteAllOf(ctx, &capiipamv1beta2.IPAddressClaim{}, client.InNamespace(ns))).To(Succeed())
		// CAPM3 lets go of its claim once the host no longer uses the address.
		Eventually(func() error {
			c := &ipamv1alpha1.IPClaim{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(m3claim), c); err != nil {
				return err
			}
			c.Finalizers = removeString(c.Finalizers, "metal3data.infrastructure.cluster.x-k8s.io")
			return k8s.Update(ctx, c)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(addressCount(g, ns)).To(BeZero())
			var m3 ipamv1alpha1.IPClaimList
			g.Expect(k8s.List(ctx, &m3, client.InNamespace(ns))).To(Succeed())
			g.Expect(m3.Items).To(BeEmpty())
			var capi capiipamv1beta2.IPAddressClaimList
			g.Expect(k8s.List(ctx, &capi, client.InNamespace(ns))).To(Succeed())
			g.Expect(capi.Items).To(BeEmpty())
			st := poolStatus(ns, "pool1")(g)
			g.Expect(st.Usage).To(HaveValue(HaveField("Used", BeZero())))
			g.Expect(st.Indexes).To(BeEmpty())
		}).Should(Succeed())
		Expect(k8s.Delete(ctx, pool)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)) }).Should(BeTrue())
	})
})
