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

package hostlink_test

import (
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// The DELETE webhook writes rackwire's pause before it admits a wired host's deletion: it
// writes nothing on a dry run, and refuses the deletion, saying why, only when it cannot.
var _ = Describe("deleting a wired host", Ordered, func() {
	const (
		ns, mac = "hr-del", "52:54:31:00:00:01"
		chassis = "aa:bb:cc:00:05:26"
	)

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "1200-1220"},
		})).To(Succeed())
		m := metav1.ObjectMeta{Namespace: ns, Name: "leafdel"}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: m, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: m, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.31", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leafdel"}}},
			&networkv1alpha1.Switch{ObjectMeta: m, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leafdel"}, ChassisMAC: chassis,
				Clean: networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(4000))},
				Ports: map[string]networkv1alpha1.PortInfo{"d1": {Name: "Ethernet7/1"}}}},
			config(ns, "prov", 1200), config(ns, "web1210", 1210),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(portState(ns, "d1")).Should(Equal(networkv1alpha1.StateIdle))
	})

	It("writes nothing on a dry run, refuses the deletion when it cannot pause the host, and pauses it when it can", func() {
		machine(ns, "m1", "h1", `[{"configurationRef":{"name":"web1210"},"nicHint":{"mac":"`+mac+`"}}]`)
		Expect(k8s.Create(ctx, hostLink(ns, "h1", mac, "d1", "prov"))).To(Succeed())
		newHost(ns, "h1", mac)
		consume(ns, "h1", ns, "m1")
		setStatus(ns, "h1", metal3v1alpha1.StateProvisioned)
		Eventually(linkOf(ns, "h1")).Should(Equal("tenant 1/1"))
		Eventually(pausedBy(ns, "h1")).Should(BeEmpty())
		get := func() *metal3v1alpha1.BareMetalHost {
			h := &metal3v1alpha1.BareMetalHost{}
			ExpectWithOffset(1, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, h)).To(Succeed())
			return h
		}
		// BMO's finalizer keeps the deleted host while BMO deprovisions it.
		h := get()
		h.Finalizers = append(h.Finalizers, metal3v1alpha1.BareMetalHostFinalizer)
		Expect(k8s.Update(ctx, h)).To(Succeed())

		By("a dry-run deletion is admitted and writes nothing")
		Expect(k8s.Delete(ctx, get(), client.DryRunAll)).To(Succeed())
		Expect(get().Annotations).NotTo(HaveKey(metal3v1alpha1.PausedAnnotation))
		Expect(get().DeletionTimestamp.IsZero()).To(BeTrue())

		By("an admission policy refuses to pause the host: its deletion is refused, saying why")
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "hr-del-no-pause"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{"metal3.io"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"baremetalhosts"}}}}}},
				Validations: []admissionregistrationv1.Validation{{
					Expression: `!has(object.metadata.annotations) || !('baremetalhost.metal3.io/paused' in object.metadata.annotations)`,
					Message:    "this namespace's hosts may not be paused"}},
			}}
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "hr-del-no-pause"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}}}}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		Expect(k8s.Create(ctx, binding)).To(Succeed())
		// The policy takes effect a moment later: a dry-run pause finds out when.
		Eventually(func() error {
			h := get()
			metav1.SetMetaDataAnnotation(&h.ObjectMeta, metal3v1alpha1.PausedAnnotation, "probe")
			return k8s.Update(ctx, h, client.DryRunAll)
		}).Should(HaveOccurred())
		err := k8s.Delete(ctx, get())
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(ContainSubstring("rackwire could not pause BareMetalHost hr-del/h1 before its deletion"),
			ContainSubstring("this namespace's hosts may not be paused")))
		Expect(get().DeletionTimestamp.IsZero()).To(BeTrue())

		By("without the policy, the deletion is admitted with the host paused")
		Expect(k8s.Delete(ctx, binding)).To(Succeed())
		Expect(k8s.Delete(ctx, policy)).To(Succeed())
		Eventually(func() error {
			h := get()
			metav1.SetMetaDataAnnotation(&h.ObjectMeta, metal3v1alpha1.PausedAnnotation, "probe")
			return k8s.Update(ctx, h, client.DryRunAll)
		}).Should(Succeed())
		Expect(k8s.Delete(ctx, get())).To(Succeed())
		h = get()
		Expect(h.DeletionTimestamp.IsZero()).To(BeFalse())
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))

		By("BMO's part played: rackwire moves the port to provisioning and lifts its pause, BMO lets go, the port is cleaned")
		Eventually(configOf(ns, "d1")).Should(Equal(ns + "/prov"))
		Eventually(pausedBy(ns, "h1")).Should(BeEmpty())
		setStatus(ns, "h1", metal3v1alpha1.StateDeleting)
		Eventually(func() error {
			h := get()
			h.Finalizers = []string{}
			for _, f := range get().Finalizers {
				if f != metal3v1alpha1.BareMetalHostFinalizer {
					h.Finalizers = append(h.Finalizers, f)
				}
			}
			return k8s.Update(ctx, h)
		}).Should(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, &metal3v1alpha1.BareMetalHost{}))
		}).Should(BeTrue())
		Expect(configOf(ns, "d1")()).To(BeEmpty())
	})
})
