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
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
)

// externalAddress is a Metal3 IPAddress of pool that names no claim: seed 000's "external
// IP management by using IPAddress CRs".
func externalAddress(ns, name, pool, address string) *ipamv1alpha1.IPAddress {
	ip := &ipamv1alpha1.IPAddress{}
	ip.Namespace, ip.Name = ns, name
	ip.Spec = ipamv1alpha1.IPAddressSpec{Address: ipamv1alpha1.IPAddressStr(address), Prefix: 24,
		Pool: corev1.ObjectReference{Name: pool}}
	return ip
}

// withoutPoolWebhook runs fn while the IPPool validating webhook is out of the apiserver's
// path, standing for a pool that ip-address-manager (or an earlier release) accepted.
func withoutPoolWebhook(fn func()) {
	const name = "validating-webhook-configuration"
	cfg := &admissionv1.ValidatingWebhookConfiguration{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, cfg)).To(Succeed())
	saved := slices.Clone(cfg.Webhooks)
	cfg.Webhooks = slices.DeleteFunc(cfg.Webhooks, func(w admissionv1.ValidatingWebhook) bool {
		return strings.HasPrefix(w.Name, "vippool-")
	})
	Expect(k8s.Update(ctx, cfg)).To(Succeed())
	defer func() {
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKey{Name: name}, cfg); err != nil {
				return err
			}
			cfg.Webhooks = saved
			return k8s.Update(ctx, cfg)
		}).Should(Succeed())
	}()
	fn()
}

var _ = Describe("who holds an address", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })
	AfterEach(func() { faults.onCreate(ns, nil) })

	It("counts an IPAddress that names no claim, as ip-address-manager does: skipped, in usage, and named by DuplicateAddress", func() {
		pool := newPool(ns, "ext", rangeOf("192.168.0.10", "192.168.0.13", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, externalAddress(ns, "reserved-10", "ext", "192.168.0.10"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "ext")(g).Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(1))))
		}).Should(Succeed())

		Expect(k8s.Create(ctx, newClaim(ns, "c1", "ext"))).To(Succeed())
		Expect(string(boundAddress(ns, "c1").Spec.Address)).To(Equal("192.168.0.11"))
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "ext")(g).Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(2))))
		}).Should(Succeed())

		By("reporting a reservation that names an address a claim holds")
		Expect(k8s.Create(ctx, externalAddress(ns, "reserved-11", "ext", "192.168.0.11"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "ext")(g).Conditions).To(ContainElement(And(
				HaveField("Type", ipam.ConditionDuplicateAddress),
				HaveField("Message", And(ContainSubstring("reserved-11"), ContainSubstring("IPClaim c1"))))))
		}).Should(Succeed())

		By("giving the address back once the reservation goes")
		Expect(k8s.Delete(ctx, externalAddress(ns, "reserved-11", "ext", ""))).To(Succeed())
		Expect(k8s.Delete(ctx, externalAddress(ns, "reserved-10", "ext", ""))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "c2", "ext"))).To(Succeed())
		Expect(boundCAPIAddress(ns, "c2").Spec.Address).To(Equal("192.168.0.10"))
	})

	It("keeps two pools with one namePrefix apart: a pool never holds the other pool's object", func() {
		for _, name := range []string{"a", "b"} {
			p := newPool(ns, name, rangeOf("192.168.0.10", "192.168.0.10", "192.168.0.0/24", "192.168.0.1"))
			p.Spec.NamePrefix = "shared"
			Expect(k8s.Create(ctx, p)).To(Succeed())
		}
		Expect(k8s.Create(ctx, newClaim(ns, "in-a", "a"))).To(Succeed())
		Expect(boundAddress(ns, "in-a").Name).To(Equal("shared-192-168-0-10"))

		By("refusing pool b's claim while pool a's object has the name")
		Expect(k8s.Create(ctx, newClaim(ns, "in-b", "b"))).To(Succeed())
		Eventually(func(g Gomega) string { return claimReady(ns, "in-b")(g).Reason }).Should(Equal(ipam.ReasonPoolExhausted))

		By("serving it once pool a releases the address")
		Expect(k8s.Delete(ctx, newClaim(ns, "in-a", "a"))).To(Succeed())
		ip := boundAddress(ns, "in-b")
		Expect(ip.Name).To(Equal("shared-192-168-0-10"))
		Expect(ip.Spec.Pool.Name).To(Equal("b"))
	})

	It("gives the second address of one name in a pool of both families another address", func() {
		pool := newPool(ns, "mixed",
			ipamv1alpha1.Pool{Start: addr("10.0.0.1"), End: addr("10.0.0.1"), Prefix: 24},
			ipamv1alpha1.Pool{Start: addr("10:0:0:1::"), End: addr("10:0:0:1::1"), Prefix: 64})
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		withoutPoolWebhook(func() {
			Eventually(func() error { return k8s.Create(ctx, pool) }).Should(Succeed())
		})
		Expect(k8s.Create(ctx, newClaim(ns, "v4", "mixed"))).To(Succeed())
		Expect(boundAddress(ns, "v4").Name).To(Equal("mixed-10-0-0-1"))
		Expect(k8s.Create(ctx, newClaim(ns, "v6", "mixed"))).To(Succeed())
		Expect(string(boundAddress(ns, "v6").Spec.Address)).To(Equal("10:0:0:1::1"))

		By("telling a claim that asks for the blocked address why")
		asks := newCAPIClaim(ns, "asks", "mixed")
		asks.Annotations = map[string]string{ipam.RequestedAddressAnnotation: "10:0:0:1::"}
		Expect(k8s.Create(ctx, asks)).To(Succeed())
		Eventually(func(g Gomega) metav1.Condition { return capiClaimReady(ns, "asks")(g) }).Should(And(
			HaveField("Reason", ipam.ReasonAllocationFailed), HaveField("Message", ContainSubstring("mixed-10-0-0-1"))))
	})

	It("wakes a claim waiting for its pre-allocated address when that address is released", func() {
		pool := newPool(ns, "pre", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "first", "pre"))).To(Succeed())
		Expect(string(boundAddress(ns, "first").Spec.Address)).To(Equal("192.168.0.10"))
		Eventually(func() error {
			p := &ipamv1alpha1.IPPool{}
			if err := k8s.Get(ctx, key(ns, "pre"), p); err != nil {
				return err
			}
			p.Spec.PreAllocations = map[string]ipamv1alpha1.IPAddressStr{"later": "192.168.0.10"}
			return k8s.Update(ctx, p)
		}).Should(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "later", "pre"))).To(Succeed())
		Eventually(func(g Gomega) string { return claimReady(ns, "later")(g).Reason }).Should(Equal(ipam.ReasonAllocationFailed))

		Expect(k8s.Delete(ctx, newClaim(ns, "first", "pre"))).To(Succeed())
		// Woken by the release, not by the 60 s backstop of a claim that waits for room.
		Eventually(func(g Gomega) bool {
			return meta.IsStatusConditionTrue(getClaim(g, ns, "later").Status.Conditions, ipamv1alpha1.ConditionReady)
		}, 30*time.Second).Should(BeTrue())
	})

	It("draws random addresses inside the first entry that still has a free one, as ip-address-manager does", func() {
		pool := newPool(ns, "rnd", rangeOf("192.168.0.10", "192.168.0.17", "192.168.0.0/24", "192.168.0.1"),
			rangeOf("192.168.1.10", "192.168.1.209", "192.168.1.0/24", "192.168.1.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationRandom
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		for i := range 8 {
			Expect(k8s.Create(ctx, newClaim(ns, fmt.Sprintf("c%d", i), "rnd"))).To(Succeed())
		}
		for i := range 8 {
			Expect(string(boundAddress(ns, fmt.Sprintf("c%d", i)).Spec.Address)).To(HavePrefix("192.168.0."))
		}
		Expect(k8s.Create(ctx, newClaim(ns, "next", "rnd"))).To(Succeed())
		Expect(string(boundAddress(ns, "next").Spec.Address)).To(HavePrefix("192.168.1."))
	})

	It("labels the addresses it adopts from ip-address-manager with their pool", func() {
		pool := newPool(ns, "adopt", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1"))
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		claim := newClaim(ns, "old", "adopt")
		claim.Finalizers = []string{ipam.ClaimFinalizer}
		Expect(k8s.Create(ctx, claim)).To(Succeed())
		up := externalAddress(ns, "adopt-192-168-0-10", "adopt", "192.168.0.10")
		up.Spec.Claim = corev1.ObjectReference{Name: "old", Namespace: ns}
		up.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ipam.metal3.io/v1alpha1", Kind: "IPClaim", Name: "old", UID: claim.UID}}
		up.Finalizers = []string{ipam.AddressFinalizer}
		Expect(k8s.Create(ctx, up)).To(Succeed())
		Expect(k8s.Create(ctx, externalAddress(ns, "by-hand", "adopt", "192.168.0.11"))).To(Succeed())
		Eventually(func(g Gomega) []string {
			var l ipamv1alpha1.IPAddressList
			g.Expect(k8s.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{ipam.PoolLabel: "adopt"})).To(Succeed())
			var names []string
			for _, ip := range l.Items {
				names = append(names, ip.Name)
			}
			return names
		}).Should(ConsistOf("adopt-192-168-0-10", "by-hand"))
		Expect(boundAddress(ns, "old").Name).To(Equal("adopt-192-168-0-10"))
	})

	It("keeps the address of a claim deleted while its create is under way until the create lands, and releases what lands", func() {
		pool := newPool(ns, "late", rangeOf("192.168.0.10", "192.168.0.10", "192.168.0.0/24", "192.168.0.1"))
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		// The first create answers at once with a timeout, and lands only after its claim
		// was deleted and a claim of the other kind was reconciled.
		var sent, dupAtLanding, landed atomic.Bool
		faults.onCreate(ns, func(_ context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*ipamv1alpha1.IPAddress); !ok || landed.Load() {
				return c.Create(ctx, obj, opts...)
			}
			if sent.CompareAndSwap(false, true) {
				land := obj.DeepCopyObject().(client.Object)
				go func() {
					defer GinkgoRecover()
					Eventually(func(g Gomega) {
						g.Expect(capiClaimReady(ns, "other")(g).Reason).NotTo(BeEmpty())
					}).Should(Succeed())
					Expect(c.Create(ctx, land, opts...)).To(Succeed())
					err := k8s.Get(ctx, key(ns, land.GetName()), &capiipamv1beta2.IPAddress{})
					dupAtLanding.Store(err == nil)
					landed.Store(true)
				}()
			}
			return apierrors.NewServerTimeout(schema.GroupResource{Resource: "ipaddresses"}, "create", 1)
		})
		Expect(k8s.Create(ctx, newClaim(ns, "gone", "late"))).To(Succeed())
		Eventually(sent.Load).Should(BeTrue())
		Expect(k8s.Delete(ctx, newClaim(ns, "gone", "late"))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "other", "late"))).To(Succeed())
		Eventually(landed.Load).Should(BeTrue())
		Expect(dupAtLanding.Load()).To(BeFalse(), "the address was given to the other claim while the create could still land")

		ip := boundCAPIAddress(ns, "other")
		Expect(ip.Spec.Address).To(Equal("192.168.0.10"))
		Eventually(func(g Gomega) {
			m3, _ := claimAddresses(ns, "gone")
			g.Expect(m3).To(BeEmpty())
		}).Should(Succeed())
		Expect(eventReasons(ns, "late")).NotTo(ContainElement(ipam.ConditionDuplicateAddress))
	})
})

func getClaim(g Gomega, ns, name string) *ipamv1alpha1.IPClaim {
	c := &ipamv1alpha1.IPClaim{}
	g.Expect(k8s.Get(ctx, key(ns, name), c)).To(Succeed())
	return c
}
