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
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// burst creates n claims, alternating Metal3 and Cluster API and the pools, from many
// goroutines at once. A create refused while the webhook server restarts is retried.
func burst(ns string, n int, pools ...string) {
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 32 {
		wg.Go(func() {
			defer GinkgoRecover()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				pool := pools[(i/2)%len(pools)]
				var obj client.Object = newClaim(ns, fmt.Sprintf("m3-%d", i), pool)
				if i%2 == 1 {
					obj = newCAPIClaim(ns, fmt.Sprintf("capi-%d", i), pool)
				}
				Eventually(func() error {
					if err := k8s.Create(ctx, obj.DeepCopyObject().(client.Object)); err != nil && !apierrors.IsAlreadyExists(err) {
						return err
					}
					return nil
				}).Should(Succeed())
			}
		})
	}
	wg.Wait()
}

// readyClaims counts the claims of both kinds that are Ready.
func readyClaims(g Gomega, ns string) int {
	var m3 ipamv1alpha1.IPClaimList
	g.Expect(k8s.List(ctx, &m3, client.InNamespace(ns))).To(Succeed())
	var capi capiipamv1beta2.IPAddressClaimList
	g.Expect(k8s.List(ctx, &capi, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, c := range m3.Items {
		if meta.IsStatusConditionTrue(c.Status.Conditions, ipamv1alpha1.ConditionReady) {
			n++
		}
	}
	for _, c := range capi.Items {
		if meta.IsStatusConditionTrue(c.Status.Conditions, capiipamv1beta2.IPAddressClaimReadyCondition) {
			n++
		}
	}
	return n
}

// addressesOf checks that every claim holds exactly one IPAddress, that no address is
// given twice in a pool and that no IPAddress is left without its claim; it returns how
// many addresses each pool has.
func addressesOf(g Gomega, ns string, claims int) map[string]int {
	var m3 ipamv1alpha1.IPAddressList
	g.Expect(k8s.List(ctx, &m3, client.InNamespace(ns))).To(Succeed())
	var capi capiipamv1beta2.IPAddressList
	g.Expect(k8s.List(ctx, &capi, client.InNamespace(ns))).To(Succeed())
	used := map[string]string{}
	perClaim := map[string]int{}
	perPool := map[string]int{}
	take := func(pool, address, claim string) {
		k := pool + "/" + address
		g.Expect(used).NotTo(HaveKey(k), "address %s of pool %s given to %s and %s", address, pool, used[k], claim)
		used[k] = claim
		perClaim[claim]++
		perPool[pool]++
	}
	for _, ip := range m3.Items {
		take(ip.Spec.Pool.Name, string(ip.Spec.Address), "m3/"+ip.Spec.Claim.Name)
	}
	for _, ip := range capi.Items {
		take(ip.Spec.PoolRef.Name, ip.Spec.Address, "capi/"+ip.Spec.ClaimRef.Name)
	}
	g.Expect(perClaim).To(HaveLen(claims), "one IPAddress per claim, none without a claim")
	for c, n := range perClaim {
		g.Expect(n).To(Equal(1), "claim %s holds %d addresses", c, n)
	}
	return perPool
}

var _ = Describe("a burst of claims", Ordered, func() {
	It("binds 2,000 claims, half Metal3 and half Cluster API, on an IPv4 and an IPv6 pool, each address once", func() {
		const n = 2000
		ns := newNamespace()
		v4 := newPool(ns, "burst-v4", ipamv1alpha1.Pool{Subnet: subnet("10.20.0.0/20"), Gateway: addr("10.20.0.1"), Prefix: 20})
		v6 := newPool(ns, "burst-v6", ipamv1alpha1.Pool{Subnet: subnet("fd00:20::/64"), Gateway: addr("fd00:20::1"), Prefix: 64})
		Expect(k8s.Create(ctx, v4)).To(Succeed())
		Expect(k8s.Create(ctx, v6)).To(Succeed())

		start := time.Now()
		burst(ns, n, "burst-v4", "burst-v6")
		created := time.Since(start)
		Eventually(func(g Gomega) int { return readyClaims(g, ns) }, 20*time.Minute, 2*time.Second).Should(Equal(n))
		took := time.Since(start)
		msg := fmt.Sprintf("2,000-claim burst: created in %s, all bound in %s: %.1f claims/s\n",
			created.Round(time.Millisecond), took.Round(time.Millisecond), float64(n)/took.Seconds())
		GinkgoWriter.Print(msg)
		AddReportEntry("2,000-claim burst", msg)
		fmt.Print(msg)

		Expect(addressesOf(Default, ns, n)).To(Equal(map[string]int{"burst-v4": n / 2, "burst-v6": n / 2}))
		Eventually(func(g Gomega) {
			s4 := poolStatus(ns, "burst-v4")(g)
			g.Expect(s4.Indexes).To(HaveLen(n / 2))
			g.Expect(s4.Usage).To(HaveValue(Equal(ipamv1alpha1.IPPoolUsage{Total: 4093, Used: n / 2, Free: 4093 - n/2, Size: "4093", FreeSize: fmt.Sprint(4093 - n/2)})))
			s6 := poolStatus(ns, "burst-v6")(g)
			g.Expect(s6.Indexes).To(HaveLen(n / 2))
			g.Expect(s6.Usage.Used).To(BeEquivalentTo(n / 2))
		}).Should(Succeed())
	})

	It("neither duplicates nor leaks an address when the manager stops mid-burst and a new one takes over", func() {
		const n = 400
		ns := newNamespace()
		Expect(k8s.Create(ctx, newPool(ns, "restart", ipamv1alpha1.Pool{Subnet: subnet("10.30.0.0/22"), Gateway: addr("10.30.0.1"), Prefix: 22}))).To(Succeed())
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			burst(ns, n, "restart")
		}()
		Eventually(func(g Gomega) int { return readyClaims(g, ns) }, 5*time.Minute, 100*time.Millisecond).Should(BeNumerically(">=", n/8))
		By("stopping the manager mid-burst")
		stopMgr()
		By("starting a new manager")
		stopMgr = startManager()
		Eventually(done, 5*time.Minute).Should(BeClosed())
		Eventually(func(g Gomega) int { return readyClaims(g, ns) }, 10*time.Minute, time.Second).Should(Equal(n))
		Expect(addressesOf(Default, ns, n)).To(Equal(map[string]int{"restart": n}))

		By("releasing every address when every claim goes")
		Expect(k8s.DeleteAllOf(ctx, &ipamv1alpha1.IPClaim{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8s.DeleteAllOf(ctx, &capiipamv1beta2.IPAddressClaim{}, client.InNamespace(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			var m3 ipamv1alpha1.IPAddressList
			g.Expect(k8s.List(ctx, &m3, client.InNamespace(ns))).To(Succeed())
			var capi capiipamv1beta2.IPAddressList
			g.Expect(k8s.List(ctx, &capi, client.InNamespace(ns))).To(Succeed())
			g.Expect(m3.Items).To(BeEmpty())
			g.Expect(capi.Items).To(BeEmpty())
			g.Expect(poolStatus(ns, "restart")(g).Usage).To(HaveValue(HaveField("Used", BeZero())))
		}, 5*time.Minute, time.Second).Should(Succeed())
	})
})
