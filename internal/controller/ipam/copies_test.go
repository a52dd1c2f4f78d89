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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
)

var _ = Describe("copies of a claim's IPAddress", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// A tenant (or a restore) creates a second IPAddress for a bound claim, same claim,
	// same owner, same address, another name; rackwire deletes the extra one. The claim's
	// own IPAddress still holds the address afterwards.
	It("does not free a claim's address when a copy of its IPAddress is deleted", func() {
		pool := newPool(ns, "cp", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "victim", "cp"))).To(Succeed())
		own := boundAddress(ns, "victim")
		Expect(string(own.Spec.Address)).To(Equal("192.168.0.10"))
		victim := getClaim(Default, ns, "victim")

		cp := externalAddress(ns, "copy-of-victim", "cp", "192.168.0.10")
		cp.Spec.Claim = corev1.ObjectReference{Name: "victim", Namespace: ns}
		cp.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ipam.metal3.io/v1alpha1", Kind: "IPClaim", Name: "victim", UID: victim.UID}}
		Expect(k8s.Create(ctx, cp)).To(Succeed())
		// rackwire deletes the extra IPAddress of the claim; the tenant would too.
		Eventually(func() bool {
			err := k8s.Delete(ctx, externalAddress(ns, "copy-of-victim", "cp", ""))
			return apierrors.IsNotFound(err)
		}).Should(BeTrue())
		Expect(k8s.Get(ctx, key(ns, own.Name), &ipamv1alpha1.IPAddress{})).To(Succeed())

		Expect(k8s.Create(ctx, newCAPIClaim(ns, "other", "cp"))).To(Succeed())
		Expect(boundCAPIAddress(ns, "other").Spec.Address).To(Equal("192.168.0.11"),
			"IPAddress %s still holds 192.168.0.10 for IPClaim victim", own.Name)
	})
})

var _ = Describe("IPAddresses made by hand for a claim", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// Every create of an IPAddress is valid, so a tenant can make one, before the claim
	// exists, that names the claim and an address another claim holds. The claim must not
	// take it over: two claims would hold one address.
	It("does not bind a claim to a hand-made IPAddress whose address another claim holds", func() {
		pool := newPool(ns, "hand", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "bar", "hand"))).To(Succeed())
		Expect(string(boundAddress(ns, "bar").Spec.Address)).To(Equal("192.168.0.10"))

		evil := externalAddress(ns, "for-later", "hand", "192.168.0.10")
		evil.Spec.Claim = corev1.ObjectReference{Name: "later", Namespace: ns}
		Expect(k8s.Create(ctx, evil)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "later", "hand"))).To(Succeed())
		Eventually(func(g Gomega) string { return claimReady(ns, "later")(g).Reason }).ShouldNot(BeEmpty())
		c := getClaim(Default, ns, "later")
		if c.Status.Address != nil {
			ip := &ipamv1alpha1.IPAddress{}
			Expect(k8s.Get(ctx, key(ns, c.Status.Address.Name), ip)).To(Succeed())
			Expect(string(ip.Spec.Address)).NotTo(Equal("192.168.0.10"), "IPClaims later and bar both hold 192.168.0.10")
		}
	})
})

var _ = Describe("IPAddresses made by hand outside the pool", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// The same hand-made IPAddress, with an address the pool does not hand out: the claim
	// must not take it as the pool's answer.
	It("does not bind a claim to a hand-made IPAddress of an address outside its pool", func() {
		pool := newPool(ns, "out", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		bogus := externalAddress(ns, "for-later", "out", "8.8.8.8")
		bogus.Spec.Claim = corev1.ObjectReference{Name: "later", Namespace: ns}
		Expect(k8s.Create(ctx, bogus)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "later", "out"))).To(Succeed())
		Expect(string(boundAddress(ns, "later").Spec.Address)).To(HavePrefix("192.168.0."))
	})
})

var _ = Describe("IPAddresses made by hand with the claim as owner", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// An owner reference is no proof either: whoever can read a claim can write its UID
	// into an IPAddress. The claim here is paused (as clusterctl move pauses it) while
	// the IPAddress is made.
	It("does not bind a claim to an IPAddress it did not publish whose address another claim holds", func() {
		pool := newPool(ns, "own", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "bar", "own"))).To(Succeed())
		Expect(string(boundAddress(ns, "bar").Spec.Address)).To(Equal("192.168.0.10"))

		later := newClaim(ns, "later", "own")
		later.Annotations = map[string]string{ipam.PausedAnnotation: ""}
		Expect(k8s.Create(ctx, later)).To(Succeed())
		evil := externalAddress(ns, "for-later", "own", "192.168.0.10")
		evil.Spec.Claim = corev1.ObjectReference{Name: "later", Namespace: ns}
		evil.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ipam.metal3.io/v1alpha1", Kind: "IPClaim", Name: "later", UID: later.UID}}
		Expect(k8s.Create(ctx, evil)).To(Succeed())
		Eventually(func() error {
			c := getClaim(Default, ns, "later")
			c.Annotations = nil
			return k8s.Update(ctx, c)
		}).Should(Succeed())
		Eventually(func(g Gomega) string { return claimReady(ns, "later")(g).Reason }).ShouldNot(BeEmpty())
		c := getClaim(Default, ns, "later")
		if c.Status.Address != nil {
			ip := &ipamv1alpha1.IPAddress{}
			Expect(k8s.Get(ctx, key(ns, c.Status.Address.Name), ip)).To(Succeed())
			Expect(string(ip.Spec.Address)).NotTo(Equal("192.168.0.10"), "IPClaims later and bar both hold 192.168.0.10")
		}
	})
})

var _ = Describe("the pool label", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// A reservation made from another pool's IPAddress manifest (kubectl get -o yaml, edit
	// the address and the pool, apply) carries that pool's label: the listing by label
	// that the migration guide and IndexesOmitted give would miss it under its own pool.
	It("corrects a pool label that names another pool", func() {
		Expect(k8s.Create(ctx, newPool(ns, "lbl", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		r := externalAddress(ns, "copied", "lbl", "192.168.0.10")
		r.Labels = map[string]string{ipam.PoolLabel: "elsewhere"}
		Expect(k8s.Create(ctx, r)).To(Succeed())
		// The label pass runs before the status write that counts the reservation.
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "lbl")(g).Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(1))))
		}).Should(Succeed())
		var l ipamv1alpha1.IPAddressList
		Expect(k8s.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{ipam.PoolLabel: "lbl"})).To(Succeed())
		Expect(l.Items).To(ContainElement(HaveField("Name", "copied")))
	})
})

var _ = Describe("a claim name reused while the old IPAddress is kept", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// Another tool's finalizer keeps the IPAddress of a deleted claim (its address stays
	// held). A claim created under the same name is another claim: it gets another free
	// address rather than wait for the old object to go.
	It("allocates for the new claim while the old claim's IPAddress waits on another finalizer", func() {
		pool := newPool(ns, "kept", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "foo", "kept"))).To(Succeed())
		old := boundAddress(ns, "foo")
		const hold = "example.com/hold"
		Eventually(func() error {
			ip := &ipamv1alpha1.IPAddress{}
			if err := k8s.Get(ctx, key(ns, old.Name), ip); err != nil {
				return err
			}
			ip.Finalizers = append(ip.Finalizers, hold)
			return k8s.Update(ctx, ip)
		}).Should(Succeed())
		DeferCleanup(func() {
			Eventually(func() error {
				ip := &ipamv1alpha1.IPAddress{}
				if err := k8s.Get(ctx, key(ns, old.Name), ip); err != nil {
					return client.IgnoreNotFound(err)
				}
				ip.Finalizers = nil
				return k8s.Update(ctx, ip)
			}).Should(Succeed())
		})
		Expect(k8s.Delete(ctx, newClaim(ns, "foo", "kept"))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, key(ns, "foo"), &ipamv1alpha1.IPClaim{}))
		}).Should(BeTrue())

		Expect(k8s.Create(ctx, newClaim(ns, "foo", "kept"))).To(Succeed())
		// A liveness bound, far above the second a bind takes here.
		Eventually(func(g Gomega) bool {
			return meta.IsStatusConditionTrue(getClaim(g, ns, "foo").Status.Conditions, ipamv1alpha1.ConditionReady)
		}, 30*time.Second).Should(BeTrue(), "the new claim foo never got an address while 192.168.0.11 is free")
		Expect(string(boundAddress(ns, "foo").Spec.Address)).To(Equal("192.168.0.11"))
	})
})
