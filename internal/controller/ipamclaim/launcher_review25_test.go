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
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/scheme"
)

// An ownerReference is data the pod's author writes: the apiserver checks only
// blockOwnerDeletion against the owner (and only with OwnerReferencesPermissionEnforcement).
// A namespace member who may create pods and read VMIs (what kubevirt.io:edit grants) can
// write the VMI's name and UID as the pod's controller.
var _ = Describe("Review 25: the launcher-pod ownership check", func() {
	It("refuses a tenant's pod that names the running VMI as its controller the VM's claim", func() {
		Skip("pending: the pod's controller reference is the author's data; telling virt-controller's pods from a tenant's needs the creating identity (admission UserInfo, a configured virt-controller service account) in the webhook and a virt-controller-written record in the CNI plugin; see the rev25 report")
		createNAD("forged", "forged-net", true, `"range":"10.10.38.0/24"`)
		vm := createVM("vm-forged", vmNet{"fg", "forged"})
		Expect(allocatedIPs("vm-forged.fg")).To(Equal([]string{"10.10.38.1/24"}))
		vmi, pod := start(vm)
		Expect(claimRefs(pod)).To(Equal(map[string]string{"forged": "vm-forged.fg"}))

		By("a namespace member with pod create and VMI read, as kubevirt.io:edit grants")
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "review25-tenant", Namespace: vmNS},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get"}},
				{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachineinstances"}, Verbs: []string{"get", "list"}},
			},
		}
		Expect(k8s.Create(ctx, role)).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "review25-tenant", Namespace: vmNS},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "review25-tenant"}},
		})).To(Succeed())
		tcfg := rest.CopyConfig(cfg)
		tcfg.Impersonate = rest.ImpersonationConfig{UserName: "review25-tenant"}
		tenant, err := client.New(tcfg, client.Options{Scheme: scheme.New()})
		Expect(err).NotTo(HaveOccurred())

		By("the tenant reads the VMI's UID and writes it as its pod's controller")
		seen := &virtv1.VirtualMachineInstance{}
		Eventually(func() error { return tenant.Get(ctx, client.ObjectKeyFromObject(vmi), seen) }).Should(Succeed())
		forged := launcherPod(seen)
		forged.GenerateName = "not-a-launcher-"
		Expect(forged.OwnerReferences[0].UID).To(Equal(vmi.UID))
		err = tenant.Create(ctx, forged)
		if err == nil {
			// Admitted: the tenant's pod carries the VM's claim, and the CNI plugin gives it
			// the VM's address beside the running VM.
			Expect(claimRefs(forged)).To(BeEmpty(), "a pod the tenant made took the claim of the running VM")
		}
		Expect(err).To(MatchError(ContainSubstring("vm-forged")))
	})
})
