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
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
)

var _ = Describe("A claim belongs to one VM of one network", func() {
	It("never takes another VM's claim when their claim names collide", func() {
		createNAD("pn", "pn-net", true, `"range":"10.10.20.0/24"`)
		first := createVM("db", vmNet{"prod_net", "pn"})
		Expect(allocatedIPs("db.prod.net")).To(Equal([]string{"10.10.20.1/24"}))

		By("VM db.prod on network net maps to the same claim name")
		second := createVM("db.prod", vmNet{"net", "pn"})
		Eventually(vmCondition("db.prod", ipamclaim.ConditionClaimConflict)).Should(Equal(
			"True: network net: IPAMClaim db.prod.net belongs to VirtualMachine db (network pn-net); rename the VM or the network so that their claim names differ"))
		Eventually(eventNotes(vmNS, "db.prod")).Should(ContainSubstring("IPAMClaimConflict: network net: IPAMClaim db.prod.net belongs to VirtualMachine db"))
		Eventually(eventNotes(vmNS, "db")).Should(ContainSubstring(
			"IPAMClaimConflict: VirtualMachine db.prod (network net) also maps to IPAMClaim db.prod.net, which stays this VM's"))

		By("the first VM's claim is untouched: its owner, its finalizers, its address")
		claim := getClaim("db.prod.net")
		Expect(metav1.GetControllerOf(claim).UID).To(Equal(first.UID))
		Expect(claim.Finalizers).To(ConsistOf(ipamclaim.VMFinalizer, ipamclaim.Finalizer))
		Expect(claim.Status.IPs).To(Equal([]string{"10.10.20.1/24"}))

		By("the second VM's launcher pod is refused, naming the other VM")
		vmi := startVMI(second)
		Expect(k8s.Create(ctx, launcherPod(vmi))).To(MatchError(And(
			ContainSubstring("network net of VM vms/db.prod"),
			ContainSubstring("IPAMClaim db.prod.net belongs to VirtualMachine db, not to VM db.prod"))))
		Expect(k8s.Delete(ctx, vmi)).To(Succeed())

		By("the first VM's pod starts with its claim")
		_, pod := start(first)
		Expect(claimRefs(pod)).To(Equal(map[string]string{"pn": "db.prod.net"}))
		Expect(getClaim("db.prod.net").Finalizers).To(ConsistOf(ipamclaim.VMFinalizer, ipamclaim.Finalizer))
	})

	It("keeps a hot-unplugged interface's address until the VMI and its launcher pod let it go", func() {
		createNAD("hot2", "hot2-net", true, `"range":"10.10.21.0/24"`)
		vm := createVM("vm-u", vmNet{"hot2", "hot2"})
		Expect(allocatedIPs("vm-u.hot2")).To(Equal([]string{"10.10.21.1/24"}))
		claim := getClaim("vm-u.hot2")
		vmi, pod := start(vm)
		// The test VMI CRD has no status subresource: status is written with the object.
		vmi.Status.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "hot2", IP: "10.10.21.1"}}
		Expect(k8s.Update(ctx, vmi)).To(Succeed())

		By("the interface marked absent in the VM's template: the running VMI still has it")
		markAbsent := func(spec *virtv1.VirtualMachineInstanceSpec) {
			for i := range spec.Domain.Devices.Interfaces {
				if spec.Domain.Devices.Interfaces[i].Name == "hot2" {
					spec.Domain.Devices.Interfaces[i].State = virtv1.InterfaceStateAbsent
				}
			}
		}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vm), vm)).To(Succeed())
		markAbsent(&vm.Spec.Template.Spec)
		Expect(k8s.Update(ctx, vm)).To(Succeed())
		Consistently(func() bool { return getClaim("vm-u.hot2").DeletionTimestamp.IsZero() }, 3*time.Second).Should(BeTrue())

		By("virt-controller marks it absent in the VMI; the domain still has it, and the pod still names the NAD")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vmi), vmi)).To(Succeed())
		markAbsent(&vmi.Spec)
		Expect(k8s.Update(ctx, vmi)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vmi), vmi)).To(Succeed())
		vmi.Status.Interfaces = nil
		Expect(k8s.Update(ctx, vmi)).To(Succeed())
		Consistently(func() bool { return getClaim("vm-u.hot2").DeletionTimestamp.IsZero() }, 3*time.Second).Should(BeTrue())
		_, err := reservation("10.10.21.1")
		Expect(err).NotTo(HaveOccurred())

		By("the pod's networks no longer name it (Multus ran DEL): the claim and its address go")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		pod.Annotations[nadv1.NetworkAttachmentAnnot] = "[]"
		Expect(k8s.Update(ctx, pod)).To(Succeed())
		Eventually(gone(claim)).Should(BeTrue())
		Eventually(func() error { _, err := reservation("10.10.21.1"); return err }).Should(MatchError(ContainSubstring("not found")))
		Eventually(eventNotes(vmNS, "vm-u")).Should(ContainSubstring("IPAMClaimDeleted: IPAMClaim vm-u.hot2 deleted: interface hot2 is absent and no longer in use"))
	})

	It("takes the addresses from the NAD the VM names, and says which NADs of the same name disagree", func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nets2"}})).To(Succeed())
		older := &nadv1.NetworkAttachmentDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "shared2", Namespace: "nets2"},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"shared-net","type":"bridge","allowPersistentIPs":true,` +
				`"ipam":{"type":"rackwire","range":"10.10.22.0/24"}}`},
		}
		Expect(k8s.Create(ctx, older)).To(Succeed())
		time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of a second: "older" must be
		createNAD("shared2", "shared-net", true, `"range":"10.10.23.0/24"`)
		createVM("vm-sh", vmNet{"shared2", "shared2"})
		Expect(allocatedIPs("vm-sh.shared2")).To(Equal([]string{"10.10.23.1/24"}))
		claim := getClaim("vm-sh.shared2")
		Expect(claim.Annotations).To(HaveKeyWithValue(ipamclaim.NADAnnotation, "nets/shared2"))
		cond := claim.Status.Conditions[0]
		Expect(cond.Message).To(ContainSubstring(
			`NetworkAttachmentDefinition(s) nets2/shared2 also name network "shared-net" with other ranges or network_name; this claim's addresses come from nets/shared2`))
	})

	It("serves no claim that its VM controller did not make", func() {
		createNAD("drain", "drain-net", true, `"range":"10.10.24.0/29"`)
		createNAD("elsewhere", "elsewhere-net", true, `"range":"10.10.25.0/24"`)
		bystander := createVM("vm-by", vmNet{"elsewhere", "elsewhere"})
		Expect(allocatedIPs("vm-by.elsewhere")).To(Equal([]string{"10.10.25.1/24"}))
		claims := map[string]*ipamclaimsv1alpha1.IPAMClaim{
			"no VirtualMachine or VirtualMachineInstance controls the claim": {ObjectMeta: metav1.ObjectMeta{Name: "rogue-1"}},
			"its VirtualMachine ghost (UID 0) does not exist": {ObjectMeta: metav1.ObjectMeta{Name: "rogue-2",
				Annotations:     map[string]string{ipamclaim.NADAnnotation: "nets/drain"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "ghost", UID: "0", Controller: ptr.To(true)}}}},
			"VirtualMachine vm-by names no network on NetworkAttachmentDefinition nets/drain": {ObjectMeta: metav1.ObjectMeta{Name: "rogue-3",
				Annotations:     map[string]string{ipamclaim.NADAnnotation: "nets/drain"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-by", UID: bystander.UID, Controller: ptr.To(true)}}}},
			// A second claim for a network the VM does name, under another name: the VM's
			// UID is known to anyone in its namespace.
			"VirtualMachine vm-by's claim for NetworkAttachmentDefinition nets/elsewhere is named vm-by.elsewhere, not rogue-4": {ObjectMeta: metav1.ObjectMeta{Name: "rogue-4",
				Annotations:     map[string]string{ipamclaim.NADAnnotation: "nets/elsewhere"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-by", UID: bystander.UID, Controller: ptr.To(true)}}}},
		}
		for _, c := range claims {
			c.Namespace = vmNS
			c.Spec.Network = "drain-net"
			if c.Name == "rogue-4" {
				c.Spec.Network = "elsewhere-net"
			}
			Expect(k8s.Create(ctx, c)).To(Succeed())
		}
		for why, c := range claims {
			Eventually(func(g Gomega) {
				got := getClaim(c.Name)
				g.Expect(got.Status.Conditions).To(ContainElement(And(
					HaveField("Type", ipamclaim.ConditionAllocated), HaveField("Status", metav1.ConditionFalse),
					HaveField("Reason", ipamclaim.ReasonNotServed), HaveField("Message", ContainSubstring(why)))))
				g.Expect(got.Status.IPs).To(BeEmpty())
				g.Expect(got.Finalizers).To(BeEmpty())
			}).Should(Succeed())
		}
		By("the ranges are untouched: a VM on each gets the next address")
		createVM("vm-dr", vmNet{"drain", "drain"})
		Expect(allocatedIPs("vm-dr.drain")).To(Equal([]string{"10.10.24.1/29"}))
		createVM("vm-el", vmNet{"elsewhere", "elsewhere"})
		Expect(allocatedIPs("vm-el.elsewhere")).To(Equal([]string{"10.10.25.2/24"}))
	})
})
