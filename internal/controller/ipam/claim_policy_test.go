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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
)

// The claims' mutating webhooks, as the manager serves them.
const (
	ipClaimWebhook        = "/mutate-ipam-metal3-io-v1alpha1-ipclaim"
	ipAddressClaimWebhook = "/mutate-ipam-cluster-x-k8s-io-v1beta2-ipaddressclaim"
)

// webhookCalls is how many admission requests the suite's manager has answered at path.
func webhookCalls(path string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_webhook_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "webhook" && l.GetValue() == path {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

var _ = Describe("the claim-finalizer admission policy", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("puts the finalizer on as the apiserver creates a claim of either kind, without calling the claims' webhooks", func() {
		Expect(k8s.Create(ctx, newPool(ns, "policy", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		before := []float64{webhookCalls(ipClaimWebhook), webhookCalls(ipAddressClaimWebhook)}

		m := newClaim(ns, "m", "policy")
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Expect(m.Finalizers).To(ConsistOf(ipam.ClaimFinalizer), "the create's answer carries the finalizer")
		got := firstChange(m, &ipamv1alpha1.IPClaimList{}).(*ipamv1alpha1.IPClaim)
		Expect(got.Status.Address).NotTo(BeNil(), "the claim's first change after its create is its bound status")

		c := newCAPIClaim(ns, "c", "policy")
		Expect(k8s.Create(ctx, c)).To(Succeed())
		Expect(c.Finalizers).To(ConsistOf(ipam.CAPIClaimFinalizer), "the create's answer carries the finalizer")
		gotc := firstChange(c, &capiipamv1beta2.IPAddressClaimList{}).(*capiipamv1beta2.IPAddressClaim)
		Expect(gotc.Status.AddressRef.Name).NotTo(BeEmpty(), "the claim's first change after its create is its bound status")

		By("keeping what the creator put in the list")
		other := newClaim(ns, "kept", "policy")
		other.Finalizers = []string{"example.com/keep"}
		Expect(k8s.Create(ctx, other)).To(Succeed())
		Expect(other.Finalizers).To(ConsistOf("example.com/keep", ipam.ClaimFinalizer))
		removeFinalizer(other, "example.com/keep")

		By("leaving alone a claim of another provider's pool and claims with the paused annotation")
		foreign := newCAPIClaim(ns, "foreign", "in-cluster")
		foreign.Spec.PoolRef = capiipamv1beta2.IPPoolReference{APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool", Name: "in-cluster"}
		pausedM := newClaim(ns, "paused-m", "policy")
		pausedM.Annotations = map[string]string{ipam.PausedAnnotation: ""}
		pausedC := newCAPIClaim(ns, "paused-c", "policy")
		pausedC.Annotations = map[string]string{ipam.PausedAnnotation: ""}
		for _, o := range []client.Object{foreign, pausedM, pausedC} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
			Expect(o.GetFinalizers()).To(BeEmpty(), "%s", o.GetName())
		}

		Expect([]float64{webhookCalls(ipClaimWebhook), webhookCalls(ipAddressClaimWebhook)}).To(Equal(before),
			"the claims' webhooks were called: their matchConditions must skip every claim the policy decided")
	})
})

// removeFinalizer takes name off o, as its owner would.
func removeFinalizer(o client.Object, name string) {
	EventuallyWithOffset(1, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			return err
		}
		var keep []string
		for _, f := range o.GetFinalizers() {
			if f != name {
				keep = append(keep, f)
			}
		}
		o.SetFinalizers(keep)
		return k8s.Update(ctx, o)
	}).Should(Succeed())
}
