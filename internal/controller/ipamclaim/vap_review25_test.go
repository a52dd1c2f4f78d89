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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/scheme"
)

// The mitigation docs/persistent-ips.md gives until rackwire checks who creates a launcher
// pod: a ValidatingAdmissionPolicy that lets only virt-controller create pods controlled by a
// VMI. Here the suite's own user (system:masters) stands in for virt-controller.
var _ = Describe("Review 25: the documented mitigation for pods posing as a VMI's launcher", func() {
	It("refuses a tenant's pod that names the VMI as its controller, and admits virt-controller's", func() {
		createNAD("vap", "vap-net", true, `"range":"10.10.46.0/24"`)
		vm := createVM("vm-vap", vmNet{"vp", "vap"})
		Expect(allocatedIPs("vm-vap.vp")).To(Equal([]string{"10.10.46.1/24"}))
		vmi := startVMI(vm)

		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "review25-launcher-pods"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
					},
				}}},
				Variables: []admissionregistrationv1.Variable{
					{Name: "refs", Expression: vmiRefs("object")},
					{Name: "oldRefs", Expression: "oldObject != null ? (" + vmiRefs("oldObject") + ") : []"},
				},
				Validations: []admissionregistrationv1.Validation{{
					Expression: "size(variables.refs) == 0 || variables.refs == variables.oldRefs || " +
						"request.userInfo.username == 'system:serviceaccount:kubevirt:kubevirt-controller' || ('system:masters' in request.userInfo.groups)",
					Message: "only virt-controller creates pods controlled by a VirtualMachineInstance",
				}},
			},
		}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, policy))).To(Succeed()) })
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "review25-launcher-pods"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			},
		}
		Expect(k8s.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, binding))).To(Succeed()) })

		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "review25-vap-tenant", Namespace: vmNS},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "update"}},
				{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachineinstances"}, Verbs: []string{"get", "list"}},
			},
		}
		Expect(k8s.Create(ctx, role)).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "review25-vap-tenant", Namespace: vmNS},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "review25-vap-tenant"}},
		})).To(Succeed())
		tcfg := rest.CopyConfig(cfg)
		tcfg.Impersonate = rest.ImpersonationConfig{UserName: "review25-vap-tenant"}
		tenant, err := client.New(tcfg, client.Options{Scheme: scheme.New()})
		Expect(err).NotTo(HaveOccurred())

		By("the tenant's pod naming the VMI as its controller is refused once the policy is in force")
		seen := &virtv1.VirtualMachineInstance{}
		Eventually(func() error { return tenant.Get(ctx, client.ObjectKeyFromObject(vmi), seen) }).Should(Succeed())
		Eventually(func() error {
			forged := launcherPod(seen)
			forged.GenerateName = "not-a-launcher-"
			err := tenant.Create(ctx, forged)
			if err == nil {
				_ = k8s.Delete(ctx, forged)
			}
			return err
		}).Should(MatchError(ContainSubstring("only virt-controller creates pods controlled by a VirtualMachineInstance")))

		By("nor may the tenant add the VMI to a pod of its own afterwards")
		plain := launcherPod(seen)
		plain.GenerateName, plain.OwnerReferences = "plain-", nil
		plain.Labels, plain.Annotations = nil, nil
		Expect(tenant.Create(ctx, plain)).To(Succeed())
		plain.OwnerReferences = launcherPod(seen).OwnerReferences
		Expect(tenant.Update(ctx, plain)).To(MatchError(ContainSubstring("only virt-controller creates pods controlled by a VirtualMachineInstance")))
		Expect(k8s.Delete(ctx, plain)).To(Succeed())

		By("virt-controller's launcher pod is admitted with the claim")
		pod := launcherPod(vmi)
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		Expect(claimRefs(pod)).To(Equal(map[string]string{"vap": "vm-vap.vp"}))
		Expect(k8s.Delete(ctx, pod)).To(Succeed())
		Expect(k8s.Delete(ctx, vmi)).To(Succeed())
	})
})

// vmiRefs is the CEL list of an object's owner references to VirtualMachineInstances.
func vmiRefs(obj string) string {
	return "has(" + obj + ".metadata.ownerReferences) ? " + obj + ".metadata.ownerReferences.filter(r, r.kind == 'VirtualMachineInstance') : []"
}
