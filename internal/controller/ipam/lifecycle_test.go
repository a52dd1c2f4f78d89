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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
)

var _ = Describe("claims and their Cluster API Cluster", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("pause on the cluster-name label of the claim, even when the pool names no cluster (both kinds)", func() {
		cluster := createCluster(ns, "labelled", true)
		Expect(k8s.Create(ctx, newPool(ns, "plain", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		m := newClaim(ns, "m", "plain")
		m.Labels = map[string]string{ipam.ClusterNameLabel: "labelled"}
		c := newCAPIClaim(ns, "c", "plain")
		c.Labels = map[string]string{ipam.ClusterNameLabel: "labelled"}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Expect(k8s.Create(ctx, c)).To(Succeed())
		// The finalizer went on at creation (the admission policy cannot read the Cluster, and
		// the finalizer harms nothing in a paused cluster: docs/ipam.md); nothing else happens.
		Expect(m.Finalizers).To(ConsistOf(ipam.ClaimFinalizer))
		Expect(c.Finalizers).To(ConsistOf(ipam.CAPIClaimFinalizer))
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			g.Expect(m.Status.Address).To(BeNil())
			g.Expect(addressCount(g, ns)).To(BeZero())
		}, 3*time.Second).Should(Succeed())
		setClusterPaused(cluster, false)
		ip := boundAddress(ns, "m")
		Expect(ip.Labels).To(HaveKeyWithValue(ipam.ClusterNameLabel, "labelled"))
		boundCAPIAddress(ns, "c")
	})

	It("allocate nothing while the claim's Cluster does not exist, without an errorMessage, and go on once it does", func() {
		Expect(k8s.Create(ctx, newPool(ns, "p", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		m := newClaim(ns, "m", "p")
		m.Labels = map[string]string{ipam.ClusterNameLabel: "moving"}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		c := newCAPIClaim(ns, "c", "p")
		c.Spec.ClusterName = "moving"
		Expect(k8s.Create(ctx, c)).To(Succeed())
		Eventually(claimReady(ns, "m")).Should(HaveField("Reason", ipam.ReasonWaitingForCluster))
		Eventually(capiClaimReady(ns, "c")).Should(HaveField("Reason", ipam.ReasonWaitingForCluster))
		Expect(k8s.Get(ctx, key(ns, "m"), m)).To(Succeed())
		Expect(m.Status.ErrorMessage).To(BeNil())
		Consistently(func(g Gomega) int { return addressCount(g, ns) }, 2*time.Second).Should(BeZero())
		createCluster(ns, "moving", false)
		boundAddress(ns, "m")
		boundCAPIAddress(ns, "c")
	})

	It("report a missing pool without an errorMessage, which CAPM3 would copy into Metal3Data as a failure", func() {
		Expect(k8s.Create(ctx, newClaim(ns, "early", "later"))).To(Succeed())
		Eventually(claimReady(ns, "early")).Should(HaveField("Reason", ipam.ReasonPoolNotReady))
		c := &ipamv1alpha1.IPClaim{}
		Expect(k8s.Get(ctx, key(ns, "early"), c)).To(Succeed())
		Expect(c.Status.ErrorMessage).To(BeNil())
		Expect(k8s.Create(ctx, newPool(ns, "later", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		boundAddress(ns, "early")
	})
})

var _ = Describe("reused claim names and hand deletions", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("never bind a recreated claim to the IPAddress of the earlier claim of that name (both kinds)", func() {
		pool := newPool(ns, "reuse", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1"))
		pool.Spec.AllocationStrategy = ipamv1alpha1.AllocationRandom
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "m", "reuse"))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "c", "reuse"))).To(Succeed())
		oldM, oldC := boundAddress(ns, "m"), boundCAPIAddress(ns, "c")

		By("removing both claims without a release, as a forced deletion does")
		for _, o := range []client.Object{&ipamv1alpha1.IPClaim{}, &capiipamv1beta2.IPAddressClaim{}} {
			name := "m"
			if _, ok := o.(*capiipamv1beta2.IPAddressClaim); ok {
				name = "c"
			}
			Eventually(func() error {
				if err := k8s.Get(ctx, key(ns, name), o); err != nil {
					return err
				}
				o.SetAnnotations(map[string]string{ipam.PausedAnnotation: ""})
				return k8s.Update(ctx, o)
			}).Should(Succeed())
			Eventually(func() error {
				if err := k8s.Get(ctx, key(ns, name), o); err != nil {
					return err
				}
				o.SetFinalizers(nil)
				return k8s.Update(ctx, o)
			}).Should(Succeed())
			Expect(k8s.Delete(ctx, o)).To(Succeed())
			Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, key(ns, name), o)) }).Should(BeTrue())
		}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(oldM), &ipamv1alpha1.IPAddress{})).To(Succeed())

		By("creating claims of the same names")
		Expect(k8s.Create(ctx, newClaim(ns, "m", "reuse"))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "c", "reuse"))).To(Succeed())
		m, c := &ipamv1alpha1.IPClaim{}, &capiipamv1beta2.IPAddressClaim{}
		Expect(k8s.Get(ctx, key(ns, "m"), m)).To(Succeed())
		Expect(k8s.Get(ctx, key(ns, "c"), c)).To(Succeed())
		newM, newC := boundAddress(ns, "m"), boundCAPIAddress(ns, "c")
		Expect(newM.UID).NotTo(Equal(oldM.UID))
		Expect(newC.UID).NotTo(Equal(oldC.UID))
		Expect(newM.OwnerReferences).To(ContainElement(And(HaveField("Kind", "IPClaim"), HaveField("UID", m.UID))))
		Expect(newC.OwnerReferences).To(ContainElement(And(HaveField("Kind", "IPAddressClaim"), HaveField("UID", c.UID))))
		Eventually(func(g Gomega) {
			m3, _ := claimAddresses(ns, "m")
			_, capi := claimAddresses(ns, "c")
			g.Expect(m3).To(HaveLen(1))
			g.Expect(capi).To(HaveLen(1))
			g.Expect(poolStatus(ns, "reuse")(g).Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(2))))
		}).Should(Succeed())
	})
})

var _ = Describe("a pool being deleted", func() {
	It("hands out no new address, keeps the ones bound, and goes once they are released", func() {
		ns := newNamespace()
		pool := newPool(ns, "going", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1"))
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "kept", "going"))).To(Succeed())
		ip := boundAddress(ns, "kept")
		Expect(k8s.Delete(ctx, pool)).To(Succeed())
		// The claims come once the manager has seen the deletion: one reconciled from a cache
		// a few milliseconds behind it binds an address, kept like any other (seen in CI).
		Eventually(func(g Gomega) []metav1.Condition { return poolStatus(ns, "going")(g).Conditions }).
			Should(ContainElement(HaveField("Reason", ipam.ReasonDeleting)))
		Expect(k8s.Create(ctx, newClaim(ns, "late", "going"))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "late-capi", "going"))).To(Succeed())
		Eventually(claimReady(ns, "late")).Should(And(HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", ipam.ReasonPoolNotReady), HaveField("Message", ContainSubstring("being deleted"))))
		Eventually(capiClaimReady(ns, "late-capi")).Should(HaveField("Reason", ipam.ReasonPoolNotReady))
		Consistently(func(g Gomega) int { return addressCount(g, ns) }, 2*time.Second).Should(Equal(1))
		Expect(boundAddress(ns, "kept").UID).To(Equal(ip.UID))

		Expect(k8s.Delete(ctx, newClaim(ns, "kept", "going"))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)) }).Should(BeTrue())
	})
})
