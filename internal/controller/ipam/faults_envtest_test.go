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
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
)

// oncePerName answers the first create of each object name with fault and performs every
// other create.
func oncePerName(fault createFault) createFault {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		mu.Lock()
		first := !seen[obj.GetName()]
		seen[obj.GetName()] = true
		mu.Unlock()
		if first {
			return fault(ctx, c, obj, opts...)
		}
		return c.Create(ctx, obj, opts...)
	}
}

// landsThenTimesOut performs the create and answers as if the request had timed out.
func landsThenTimesOut(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Create(ctx, obj, opts...); err != nil {
		return err
	}
	return apierrors.NewServerTimeout(schema.GroupResource{Resource: "ipaddresses"}, "create", 1)
}

// expectOneAddressEach checks that every claim named holds exactly one IPAddress and that
// no address is held twice.
func expectOneAddressEach(ns string, m3, capi []string) {
	seen := map[string]string{}
	for _, c := range m3 {
		ip := boundAddress(ns, c)
		objs, _ := claimAddresses(ns, c)
		ExpectWithOffset(1, objs).To(HaveLen(1), "IPClaim %s", c)
		ExpectWithOffset(1, seen).NotTo(HaveKey(string(ip.Spec.Address)))
		seen[string(ip.Spec.Address)] = c
	}
	for _, c := range capi {
		ip := boundCAPIAddress(ns, c)
		_, objs := claimAddresses(ns, c)
		ExpectWithOffset(1, objs).To(HaveLen(1), "IPAddressClaim %s", c)
		ExpectWithOffset(1, seen).NotTo(HaveKey(ip.Spec.Address))
		seen[ip.Spec.Address] = c
	}
}

var _ = Describe("IPAddress creates that fail", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })
	AfterEach(func() { faults.onCreate(ns, nil) })

	It("keep the reservation when a create lands and then times out, and settle it through AlreadyExists (both kinds, both strategies)", func() {
		faults.onCreate(ns, oncePerName(landsThenTimesOut))
		random := newPool(ns, "random", rangeOf("192.168.0.10", "192.168.0.30", "192.168.0.0/24", "192.168.0.1"))
		random.Spec.AllocationStrategy = ipamv1alpha1.AllocationRandom
		seq := newPool(ns, "seq", rangeOf("192.168.1.10", "192.168.1.30", "192.168.1.0/24", "192.168.1.1"))
		seq.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, random)).To(Succeed())
		Expect(k8s.Create(ctx, seq)).To(Succeed())
		var m3, capi []string
		for i := range 4 {
			for _, pool := range []string{"random", "seq"} {
				m := fmt.Sprintf("m3-%s-%d", pool, i)
				c := fmt.Sprintf("capi-%s-%d", pool, i)
				Expect(k8s.Create(ctx, newClaim(ns, m, pool))).To(Succeed())
				Expect(k8s.Create(ctx, newCAPIClaim(ns, c, pool))).To(Succeed())
				m3, capi = append(m3, m), append(capi, c)
			}
		}
		expectOneAddressEach(ns, m3, capi)
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "random")(g).Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(8))))
			g.Expect(poolStatus(ns, "seq")(g).Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(8))))
		}).Should(Succeed())

		By("releasing all of them, and then letting both pools go")
		Expect(k8s.DeleteAllOf(ctx, &ipamv1alpha1.IPClaim{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8s.DeleteAllOf(ctx, &capiipamv1beta2.IPAddressClaim{}, client.InNamespace(ns))).To(Succeed())
		Eventually(func(g Gomega) int { return addressCount(g, ns) }).Should(BeZero())
		Expect(k8s.DeleteAllOf(ctx, &ipamv1alpha1.IPPool{}, client.InNamespace(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			var pools ipamv1alpha1.IPPoolList
			g.Expect(k8s.List(ctx, &pools, client.InNamespace(ns))).To(Succeed())
			g.Expect(pools.Items).To(BeEmpty())
		}).Should(Succeed())
	})

	It("release the reservation on a definite refusal and bind on the retry", func() {
		faults.onCreate(ns, oncePerName(func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "ipaddresses"}, "x", fmt.Errorf("injected"))
		}))
		pool := newPool(ns, "refused", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "a", "refused"))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "b", "refused"))).To(Succeed())
		expectOneAddressEach(ns, []string{"a"}, []string{"b"})
	})

	It("pick another address when the AlreadyExists object holds another claim, leaving that object alone", func() {
		pool := newPool(ns, "taken", rangeOf("192.168.0.10", "192.168.0.12", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		// Another writer (a stale leader) creates the object of the picked address just before us.
		var other *ipamv1alpha1.IPAddress
		faults.onCreate(ns, oncePerName(func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if ip, ok := obj.(*ipamv1alpha1.IPAddress); ok && other == nil {
				other = ip.DeepCopy()
				other.Spec.Claim.Name = "someone-else"
				other.OwnerReferences = nil
				other.Finalizers = nil
				Expect(k8s.Create(ctx, other)).To(Succeed())
			}
			return c.Create(ctx, obj, opts...)
		}))
		Expect(k8s.Create(ctx, newClaim(ns, "mine", "taken"))).To(Succeed())
		ip := boundAddress(ns, "mine")
		Expect(other).NotTo(BeNil())
		Expect(ip.Name).NotTo(Equal(other.Name))
		got := &ipamv1alpha1.IPAddress{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(other), got)).To(Succeed())
		Expect(got.Spec.Claim.Name).To(Equal("someone-else"))
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "taken")(g).Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(2))))
		}).Should(Succeed())
	})
})

var _ = Describe("a second writer", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("cannot give a Cluster API address twice: IPAddresses are named after the address, and claim-named ones are still adopted", func() {
		cluster := createCluster(ns, "c", true)
		pool := newPool(ns, "two", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		pool.Spec.ClusterName = ptr.To("c")
		Expect(k8s.Create(ctx, pool)).To(Succeed())

		By("seeding, while the cluster is paused, a claim-named IPAddress as earlier rackwire releases wrote it")
		old := newCAPIClaim(ns, "old", "two")
		old.Finalizers = []string{"ipam.metal3.io/ipclaim"}
		Expect(k8s.Create(ctx, old)).To(Succeed())
		legacy := &capiipamv1beta2.IPAddress{}
		legacy.Namespace, legacy.Name = ns, "old"
		legacy.Finalizers = []string{"ipam.metal3.io/ipaddress"}
		legacy.OwnerReferences = []metav1.OwnerReference{{APIVersion: capiipamv1beta2.GroupVersion.String(), Kind: "IPAddressClaim", Name: "old", UID: old.UID}}
		legacy.Spec = capiipamv1beta2.IPAddressSpec{ClaimRef: capiipamv1beta2.IPAddressClaimReference{Name: "old"}, PoolRef: old.Spec.PoolRef,
			Address: "192.168.0.10", Prefix: ptr.To[int32](24)}
		Expect(k8s.Create(ctx, legacy)).To(Succeed())
		setClusterPaused(cluster, false)
		Expect(boundCAPIAddress(ns, "old").Name).To(Equal("old"))

		By("refusing, in the apiserver, a second object for an address")
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "new", "two"))).To(Succeed())
		ip := boundCAPIAddress(ns, "new")
		Expect(ip.Name).To(Equal("two-192-168-0-11"))
		dup := &capiipamv1beta2.IPAddress{}
		dup.Namespace, dup.Name = ns, ip.Name
		dup.Spec = capiipamv1beta2.IPAddressSpec{ClaimRef: capiipamv1beta2.IPAddressClaimReference{Name: "intruder"}, PoolRef: old.Spec.PoolRef,
			Address: "192.168.0.11", Prefix: ptr.To[int32](24)}
		Expect(apierrors.IsAlreadyExists(k8s.Create(ctx, dup))).To(BeTrue())

		By("reporting an address held by a Metal3 and a Cluster API IPAddress at once")
		m3 := &ipamv1alpha1.IPAddress{}
		m3.Namespace, m3.Name = ns, ip.Name
		m3.Spec = ipamv1alpha1.IPAddressSpec{Address: "192.168.0.11", Prefix: 24,
			Pool: corev1.ObjectReference{Name: "two"}, Claim: corev1.ObjectReference{Name: "intruder"}}
		Expect(k8s.Create(ctx, m3)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "two")(g).Conditions).To(ContainElement(And(
				HaveField("Type", ipam.ConditionDuplicateAddress), HaveField("Status", metav1.ConditionTrue),
				HaveField("Message", And(ContainSubstring("192.168.0.11"), ContainSubstring("IPClaim intruder"), ContainSubstring("IPAddressClaim new"))))))
		}).Should(Succeed())
		Eventually(func() []string { return eventReasons(ns, "two") }).Should(ContainElement(ipam.ConditionDuplicateAddress))

		By("clearing the condition once the second holder is gone")
		Expect(k8s.Delete(ctx, m3)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(poolStatus(ns, "two")(g).Conditions).NotTo(ContainElement(HaveField("Type", ipam.ConditionDuplicateAddress)))
		}).Should(Succeed())

		By("releasing the adopted object, legacy finalizers included")
		Expect(k8s.Delete(ctx, newCAPIClaim(ns, "old", "two"))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(legacy), &capiipamv1beta2.IPAddress{}))
		}).Should(BeTrue())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, key(ns, "old"), &capiipamv1beta2.IPAddressClaim{}))
		}).Should(BeTrue())
	})
})

var _ = Describe("claims still in use", func() {
	It("keep their address while another finalizer holds the claim being deleted (both kinds)", func() {
		ns := newNamespace()
		const capm3 = "metal3data.infrastructure.cluster.x-k8s.io"
		Expect(k8s.Create(ctx, newPool(ns, "inuse", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		m := newClaim(ns, "m", "inuse")
		m.Finalizers = []string{capm3}
		c := newCAPIClaim(ns, "c", "inuse")
		c.Finalizers = []string{capm3}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Expect(k8s.Create(ctx, c)).To(Succeed())
		mip, cip := boundAddress(ns, "m"), boundCAPIAddress(ns, "c")
		Expect(k8s.Delete(ctx, m)).To(Succeed())
		Expect(k8s.Delete(ctx, c)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mip), &ipamv1alpha1.IPAddress{})).To(Succeed())
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cip), &capiipamv1beta2.IPAddress{})).To(Succeed())
			got := &ipamv1alpha1.IPClaim{}
			g.Expect(k8s.Get(ctx, key(ns, "m"), got)).To(Succeed())
			g.Expect(got.Finalizers).To(ContainElement(ipam.ClaimFinalizer))
		}, 3*time.Second).Should(Succeed())

		By("releasing once rackwire's finalizer is the last one")
		for _, o := range []client.Object{&ipamv1alpha1.IPClaim{}, &capiipamv1beta2.IPAddressClaim{}} {
			name := "m"
			if _, ok := o.(*capiipamv1beta2.IPAddressClaim); ok {
				name = "c"
			}
			Eventually(func() error {
				if err := k8s.Get(ctx, key(ns, name), o); err != nil {
					return err
				}
				o.SetFinalizers(removeString(o.GetFinalizers(), capm3))
				return k8s.Update(ctx, o)
			}).Should(Succeed())
		}
		Eventually(func(g Gomega) int { return addressCount(g, ns) }).Should(BeZero())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, key(ns, "m"), &ipamv1alpha1.IPClaim{})) }).Should(BeTrue())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, key(ns, "c"), &capiipamv1beta2.IPAddressClaim{}))
		}).Should(BeTrue())
	})
})

func removeString(in []string, s string) []string {
	var out []string
	for _, v := range in {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}
