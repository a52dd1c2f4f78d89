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

package ipamclaim_test

import (
	"context"
	"encoding/json"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/scheme"
	kubevirtwebhooks "github.com/rackwire/rackwire/webhooks/kubevirt/v1"
)

// laggingCache is the manager's cache before it has seen an object's re-creation: it still
// holds the VMI (or claim) of that name that was deleted. Everything else is read from the
// apiserver.
type laggingCache struct {
	client.Reader
	vmi   *virtv1.VirtualMachineInstance
	claim *ipamclaimsv1alpha1.IPAMClaim
}

func (c laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if v, ok := obj.(*virtv1.VirtualMachineInstance); ok && c.vmi != nil && key == client.ObjectKeyFromObject(c.vmi) {
		c.vmi.DeepCopyInto(v)
		return nil
	}
	if v, ok := obj.(*ipamclaimsv1alpha1.IPAMClaim); ok && c.claim != nil && key == client.ObjectKeyFromObject(c.claim) {
		c.claim.DeepCopyInto(v)
		return nil
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

// admit runs the launcher-pod webhook on the pod's creation with that cache.
func admit(cache client.Reader, pod *corev1.Pod) admission.Response {
	raw, err := json.Marshal(pod)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	w := kubevirtwebhooks.LauncherPodWebhook{Client: cache, Live: k8s, Decoder: admission.NewDecoder(scheme.New())}
	return w.Handle(ctx, admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: pod.Namespace, Object: runtime.RawExtension{Raw: raw},
	}})
}

var _ = Describe("Review 25: a VM restarted under its name", func() {
	It("admits the new VMI's launcher pod while the webhook's cache still shows the VMI before", func() {
		createNAD("restart", "restart-net", true, `"range":"10.10.39.0/24"`)
		vm := createVM("vm-restart", vmNet{"rs", "restart"})
		Expect(allocatedIPs("vm-restart.rs")).To(Equal([]string{"10.10.39.1/24"}))

		By("the VM stops (its VMI goes) and starts again: a VMI of the same name, another UID")
		before := startVMI(vm)
		Expect(k8s.Delete(ctx, before)).To(Succeed())
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(before), before); err != nil {
				return client.IgnoreNotFound(err)
			}
			before.Finalizers = nil
			return k8s.Update(ctx, before)
		}).Should(Succeed())
		Eventually(gone(before)).Should(BeTrue())
		vmi := startVMI(vm)
		Expect(vmi.UID).NotTo(Equal(before.UID))

		By("virt-controller creates the new VMI's launcher pod before the cache has seen the VMI change")
		pod := launcherPod(vmi)
		pod.Name = "virt-launcher-vm-restart-abcde"
		resp := admit(laggingCache{Reader: k8s, vmi: before}, pod)
		Expect(resp.Result.Message).NotTo(ContainSubstring("is not controlled by"))
		Expect(resp.Allowed).To(BeTrue())
		Expect(resp.Patches).NotTo(BeEmpty(), "the pod gets the claim reference")
		Expect(k8s.Delete(ctx, vmi)).To(Succeed())
	})

	It("admits a re-created VM's launcher pod while the webhook's cache still shows the earlier VM's claim", func() {
		createNAD("reclaim", "reclaim-net", true, `"range":"10.10.47.0/24"`)
		old := createVM("vm-reclaim", vmNet{"rc", "reclaim"})
		Expect(allocatedIPs("vm-reclaim.rc")).To(Equal([]string{"10.10.47.1/24"}))
		earlier := getClaim("vm-reclaim.rc")

		By("the VM deleted, and its claim deleted as the garbage collector does")
		Expect(k8s.Delete(ctx, old)).To(Succeed())
		Eventually(func() []string { return getClaim("vm-reclaim.rc").Finalizers }).Should(Equal([]string{ipamclaim.Finalizer}))
		Expect(k8s.Delete(ctx, getClaim("vm-reclaim.rc"))).To(Succeed())
		Eventually(gone(earlier.DeepCopy())).Should(BeTrue())

		By("created again: the VM's own claim, then its VMI and launcher pod")
		vm := createVM("vm-reclaim", vmNet{"rc", "reclaim"})
		Eventually(func() types.UID {
			c := &ipamclaimsv1alpha1.IPAMClaim{}
			if k8s.Get(ctx, client.ObjectKeyFromObject(earlier), c) != nil || metav1.GetControllerOf(c) == nil {
				return ""
			}
			return metav1.GetControllerOf(c).UID
		}).Should(Equal(vm.UID))
		vmi := startVMI(vm)
		pod := launcherPod(vmi)
		pod.Name = "virt-launcher-vm-reclaim-abcde"

		resp := admit(laggingCache{Reader: k8s, claim: earlier}, pod)
		Expect(resp.Result.Message).NotTo(ContainSubstring("belongs to an earlier"))
		Expect(resp.Allowed).To(BeTrue())
		Expect(resp.Patches).NotTo(BeEmpty(), "the pod gets the claim reference")
		Expect(k8s.Delete(ctx, vmi)).To(Succeed())
	})
})
