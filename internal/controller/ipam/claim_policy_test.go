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
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/internal/controlplane"
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

	It("is stood in for by the claims' webhooks where the apiserver applies no policy", func() {
		for _, b := range policyBindings() {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, b))).To(Succeed())
		}
		DeferCleanup(func() {
			for _, b := range policyBindings() {
				Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, b))).To(Succeed())
			}
			// Back to the policy: a claim's create reaches no webhook again.
			Eventually(func(g Gomega) {
				calls := webhookCalls(ipClaimWebhook)
				m := newClaim(ns, "probe", "none")
				g.Expect(k8s.Create(ctx, m, client.DryRunAll)).To(Succeed())
				g.Expect(m.Finalizers).To(ConsistOf(ipam.ClaimFinalizer))
				g.Expect(webhookCalls(ipClaimWebhook)).To(Equal(calls))
			}).Should(Succeed())
		})

		// The apiserver stops applying the policies a moment after their bindings go.
		Eventually(func(g Gomega) {
			calls := []float64{webhookCalls(ipClaimWebhook), webhookCalls(ipAddressClaimWebhook)}
			m := newClaim(ns, "m", "none")
			g.Expect(k8s.Create(ctx, m, client.DryRunAll)).To(Succeed())
			c := newCAPIClaim(ns, "c", "none")
			g.Expect(k8s.Create(ctx, c, client.DryRunAll)).To(Succeed())
			g.Expect([]float64{webhookCalls(ipClaimWebhook), webhookCalls(ipAddressClaimWebhook)}).To(Equal([]float64{calls[0] + 1, calls[1] + 1}))
			g.Expect(m.Finalizers).To(ConsistOf(ipam.ClaimFinalizer))
			g.Expect(c.Finalizers).To(ConsistOf(ipam.CAPIClaimFinalizer))
		}).Should(Succeed())

		By("leaving to the webhooks no claim they would not finalize")
		calls := []float64{webhookCalls(ipClaimWebhook), webhookCalls(ipAddressClaimWebhook)}
		foreign := newCAPIClaim(ns, "foreign", "in-cluster")
		foreign.Spec.PoolRef = capiipamv1beta2.IPPoolReference{APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool", Name: "in-cluster"}
		paused := newClaim(ns, "paused", "none")
		paused.Annotations = map[string]string{ipam.PausedAnnotation: ""}
		done := newClaim(ns, "done", "none")
		done.Finalizers = []string{ipam.ClaimFinalizer}
		for _, o := range []client.Object{foreign, paused, done} {
			Expect(k8s.Create(ctx, o, client.DryRunAll)).To(Succeed())
		}
		Expect([]float64{webhookCalls(ipClaimWebhook), webhookCalls(ipAddressClaimWebhook)}).To(Equal(calls))
		Expect(foreign.Finalizers).To(BeEmpty())
		Expect(paused.Finalizers).To(BeEmpty())
	})
})

// policyBindings are the bindings of config/ipam/claim-finalizer-policy.yaml: without them
// the apiserver applies none of its policies, as where the policy API is not served.
func policyBindings() []*unstructured.Unstructured {
	objs, err := controlplane.ReadObjects(filepath.Join(root, "config/ipam/claim-finalizer-policy.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var bindings []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "MutatingAdmissionPolicyBinding" {
			bindings = append(bindings, o)
		}
	}
	Expect(bindings).To(HaveLen(2))
	return bindings
}

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
