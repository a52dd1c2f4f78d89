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
	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
)

var _ = Describe("A VM on a persistent network", func() {
	It("gets its claim before it boots, keeps the address across stop and start, and gives it back when deleted", func() {
		createNAD("blue", "blue-net", true, `"range":"10.10.1.0/24","gateway":"10.10.1.1"`)
		createNAD("plain", "plain-net", false, `"range":"10.10.9.0/24"`)
		vm := createVM("vm-a", vmNet{"blue", "blue"}, vmNet{"plain", "plain"})

		By("the claim: owner, label, finalizers, network, and the range's first free address")
		Expect(allocatedIPs("vm-a.blue")).To(Equal([]string{"10.10.1.2/24"}))
		claim := getClaim("vm-a.blue")
		Expect(claim.Spec.Network).To(Equal("blue-net"))
		Expect(claim.Labels).To(HaveKeyWithValue(ipamclaim.VMLabel, "vm-a"))
		Expect(claim.Finalizers).To(ConsistOf(ipamclaim.VMFinalizer, ipamclaim.Finalizer))
		Expect(claim.OwnerReferences).To(ConsistOf(metav1.OwnerReference{
			APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-a", UID: vm.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}))
		Expect(condition("vm-a.blue")()).To(Equal("True Allocated"))
		Expect(claim.Status.Conditions[0].Message).To(Equal("addresses 10.10.1.2/24 held for the claim"))

		By("the reservation: named after the address, tied to the claim")
		orip, err := reservation("10.10.1.2")
		Expect(err).NotTo(HaveOccurred())
		Expect(orip.Spec.PodRef).To(Equal(vmNS + "/vm-a.blue"))
		Expect(orip.Spec.ContainerID).To(BeEmpty())
		Expect(orip.Spec.IfName).To(BeEmpty())
		Expect(orip.Labels).To(Equal(map[string]string{
			ipamclaim.LabelClaim: "vm-a.blue", ipamclaim.LabelClaimNamespace: vmNS, ipamclaim.LabelManagedBy: "rackwire",
		}))
		Expect(orip.OwnerReferences).To(BeEmpty())

		By("the non-persistent network has no claim")
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: vmNS, Name: "vm-a.plain"}, &ipamclaimsv1alpha1.IPAMClaim{})).NotTo(Succeed())

		By("started: the launcher pod carries the claim reference of the persistent network only")
		vmi, pod := start(vm)
		Expect(claimRefs(pod)).To(Equal(map[string]string{"blue": "vm-a.blue", "plain": ""}))

		By("stopped: the VMI and the pod go, the claim and its address stay")
		stop(vmi, pod)
		// The VMI's deletion reached the controller; a second claim created since tells
		// that this VM's reconcile came after it.
		createVM("vm-b", vmNet{"blue", "blue"})
		Expect(allocatedIPs("vm-b.blue")).To(Equal([]string{"10.10.1.3/24"}))
		Expect(getClaim("vm-a.blue").Status.IPs).To(Equal([]string{"10.10.1.2/24"}))
		Expect(getClaim("vm-a.blue").DeletionTimestamp).To(BeNil())
		_, err = reservation("10.10.1.2")
		Expect(err).NotTo(HaveOccurred())

		By("started again: the same claim, the same address")
		vmi, pod = start(vm)
		Expect(claimRefs(pod)["blue"]).To(Equal("vm-a.blue"))
		Expect(getClaim("vm-a.blue").UID).To(Equal(claim.UID))
		Expect(getClaim("vm-a.blue").Status.IPs).To(Equal([]string{"10.10.1.2/24"}))

		By("deleted (stopped first, as virt-controller does): the claim goes with its reservation")
		stop(vmi, pod)
		Expect(k8s.Delete(ctx, vm)).To(Succeed())
		Eventually(gone(vm)).Should(BeTrue())
		collectGarbage(vm)
		Eventually(gone(claim)).Should(BeTrue())
		Eventually(gone(orip)).Should(BeTrue())
		Eventually(eventNotes(vmNS, "vm-a.blue")).Should(ContainSubstring("Released: 1 reservation(s) deleted"))

		By("its address is free again: the next VM gets it")
		createVM("vm-c", vmNet{"blue", "blue"})
		Expect(allocatedIPs("vm-c.blue")).To(Equal([]string{"10.10.1.2/24"}))
	})

	It("keeps the address of a foreground-deleted VM until its VMI is gone", func() {
		createNAD("green", "green-net", true, `"range":"10.10.2.0/24"`)
		vm := createVM("vm-fg", vmNet{"green", "green"})
		Expect(allocatedIPs("vm-fg.green")).To(Equal([]string{"10.10.2.1/24"}))
		claim := getClaim("vm-fg.green")
		vmi, pod := start(vm)

		By("the VM deleted in the foreground: the garbage collector deletes the claim while the VM runs")
		Expect(k8s.Delete(ctx, vm, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
		collectGarbage(vm)
		Eventually(func() bool { return !getClaim("vm-fg.green").DeletionTimestamp.IsZero() }).Should(BeTrue())

		By("the address stays held: another VM gets the next one")
		createVM("vm-fg2", vmNet{"green", "green"})
		Expect(allocatedIPs("vm-fg2.green")).To(Equal([]string{"10.10.2.2/24"}))
		Expect(getClaim("vm-fg.green").Finalizers).To(ConsistOf(ipamclaim.VMFinalizer, ipamclaim.Finalizer))
		_, err := reservation("10.10.2.1")
		Expect(err).NotTo(HaveOccurred())

		By("the VMI gone: the claim goes and its address is released")
		stop(vmi, pod)
		Eventually(gone(claim)).Should(BeTrue())
		Eventually(func() error { _, err := reservation("10.10.2.1"); return err }).Should(MatchError(ContainSubstring("not found")))
		Eventually(eventNotes(vmNS, "vm-fg")).Should(ContainSubstring("IPAMClaimsReleased"))
	})

	It("neither adopts nor deletes a claim of an old VM of the same name, and takes over once it is gone", func() {
		createNAD("red", "red-net", true, `"range":"10.10.3.0/24"`)
		old := &ipamclaimsv1alpha1.IPAMClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name: "vm-s.red", Namespace: vmNS, Labels: map[string]string{ipamclaim.VMLabel: "vm-s"},
				Finalizers: []string{ipamclaim.VMFinalizer, ipamclaim.Finalizer},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-s", UID: "0ld-vm-uid", Controller: ptr.To(true),
				}},
			},
			Spec: ipamclaimsv1alpha1.IPAMClaimSpec{Network: "red-net"},
		}
		Expect(k8s.Create(ctx, old)).To(Succeed())
		// Its address, as the earlier VM's claim held it (the VM is gone, so it gets no new one).
		Eventually(func() error {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(old), old)).To(Succeed())
			old.Status.IPs = []string{"10.10.3.1/24"}
			return k8s.Status().Update(ctx, old)
		}).Should(Succeed())
		Eventually(func() error { _, err := reservation("10.10.3.1"); return err }).Should(Succeed())

		vm := createVM("vm-s", vmNet{"red", "red"})
		Eventually(eventNotes(vmNS, "vm-s")).Should(ContainSubstring(
			"IPAMClaimOwnedByAnotherVM: IPAMClaim vm-s.red belongs to an earlier VirtualMachine vm-s (UID 0ld-vm-uid)"))
		c := getClaim("vm-s.red")
		Expect(c.UID).To(Equal(old.UID))
		Expect(c.DeletionTimestamp).To(BeNil())
		Expect(metav1.GetControllerOf(c).UID).To(BeEquivalentTo("0ld-vm-uid"))

		By("the garbage collector removes the old claim: its address is released and the VM gets a claim of its own")
		collectGarbage(&virtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: vmNS, UID: "0ld-vm-uid"}})
		Eventually(func(g Gomega) {
			c := &ipamclaimsv1alpha1.IPAMClaim{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: vmNS, Name: "vm-s.red"}, c)).To(Succeed())
			g.Expect(metav1.GetControllerOf(c).UID).To(Equal(vm.UID))
		}).Should(Succeed())
		Expect(allocatedIPs("vm-s.red")).To(Equal([]string{"10.10.3.1/24"}))
	})

	It("gets one address per range on a dual-stack network, in range order", func() {
		createNAD("dual", "dual-net", true,
			`"range":"10.10.4.0/24","range_start":"10.10.4.10","exclude":["10.10.4.10/31"],"ipRanges":[{"range":"fd00:4::/64","range_start":"fd00:4::100"}]`)
		createVM("vm-d", vmNet{"dual", "dual"})
		Expect(allocatedIPs("vm-d.dual")).To(Equal([]string{"10.10.4.12/24", "fd00:4::100/64"}))
		_, err := reservation("fd00-4--100")
		Expect(err).NotTo(HaveOccurred())

		By("its spec is immutable: another network takes another claim")
		claim := getClaim("vm-d.dual")
		claim.Spec.Network = "blue-net"
		Expect(k8s.Update(ctx, claim)).To(MatchError(And(ContainSubstring("spec: Forbidden: is immutable"), ContainSubstring("delete the claim and create a new one"))))
	})

	It("says when a network is exhausted, and allocates once an address is released", func() {
		createNAD("tiny", "tiny-net", true, `"range":"10.10.5.0/30","gateway":"10.10.5.1"`)
		first := createVM("vm-t1", vmNet{"tiny", "tiny"})
		Expect(allocatedIPs("vm-t1.tiny")).To(Equal([]string{"10.10.5.2/30"}))
		createVM("vm-t2", vmNet{"tiny", "tiny"})
		Eventually(condition("vm-t2.tiny")).Should(Equal("False Exhausted"))
		Eventually(eventNotes(vmNS, "vm-t2.tiny")).Should(ContainSubstring("Exhausted: network tiny-net: range 0 has no free address"))
		Expect(getClaim("vm-t2.tiny").Status.IPs).To(BeEmpty())

		By("the first VM deleted: the waiting claim gets its address (woken by the release, not by a retry)")
		Expect(k8s.Delete(ctx, first)).To(Succeed())
		collectGarbage(first)
		Expect(allocatedIPs("vm-t2.tiny")).To(Equal([]string{"10.10.5.2/30"}))
		Expect(condition("vm-t2.tiny")()).To(Equal("True Allocated"))
	})

	It("holds the addresses of existing claims and whereabouts IPPools before handing out new ones", func() {
		By("a claim written with its address already in status.ips, its reservation missing (before its NAD: nobody touches it yet)")
		pre := &ipamclaimsv1alpha1.IPAMClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "restored", Namespace: vmNS},
			Spec:       ipamclaimsv1alpha1.IPAMClaimSpec{Network: "named-net"},
		}
		Expect(k8s.Create(ctx, pre)).To(Succeed())
		pre.Status.IPs = []string{"10.10.6.1/24"}
		Expect(k8s.Status().Update(ctx, pre)).To(Succeed())
		By("an IPPool of the network holding offset 2")
		pool := &nodeslicev1alpha1.IPPool{
			ObjectMeta: metav1.ObjectMeta{Name: "pool6-10.10.6.0-24", Namespace: poolNS},
			Spec: nodeslicev1alpha1.IPPoolSpec{Range: "10.10.6.0/24", Allocations: map[string]nodeslicev1alpha1.IPAllocation{
				"2": {ContainerID: "c1", PodRef: "default/pod-1"},
			}},
		}
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		createNAD("named", "named-net", true, `"range":"10.10.6.0/24","network_name":"pool6"`)
		// The claim's reservation recreated: the manager has seen it.
		Eventually(func() error { _, err := reservation("pool6-10.10.6.1"); return err }).Should(Succeed())

		createVM("vm-n", vmNet{"named", "named"})
		Expect(allocatedIPs("vm-n.named")).To(Equal([]string{"10.10.6.3/24"}))
		Expect(getClaim("restored").Status.IPs).To(Equal([]string{"10.10.6.1/24"}))
	})

	It("deletes the claim of an interface marked absent on a stopped VM", func() {
		createNAD("hot", "hot-net", true, `"range":"10.10.7.0/24"`)
		vm := createVM("vm-h", vmNet{"hot", "hot"})
		Expect(allocatedIPs("vm-h.hot")).To(Equal([]string{"10.10.7.1/24"}))
		claim := getClaim("vm-h.hot")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vm), vm)).To(Succeed())
		for i := range vm.Spec.Template.Spec.Domain.Devices.Interfaces {
			if vm.Spec.Template.Spec.Domain.Devices.Interfaces[i].Name == "hot" {
				vm.Spec.Template.Spec.Domain.Devices.Interfaces[i].State = virtv1.InterfaceStateAbsent
			}
		}
		Expect(k8s.Update(ctx, vm)).To(Succeed())
		Eventually(gone(claim)).Should(BeTrue())
		Eventually(func() error { _, err := reservation("10.10.7.1"); return err }).Should(MatchError(ContainSubstring("not found")))
		Eventually(eventNotes(vmNS, "vm-h")).Should(ContainSubstring("IPAMClaimDeleted: IPAMClaim vm-h.hot deleted: interface hot is absent and no longer in use"))
	})

	It("serves virt-launcher pods only, and refuses one it cannot resolve rather than let it take a new address", func() {
		hooks := &admissionregistrationv1.MutatingWebhookConfigurationList{}
		Expect(k8s.List(ctx, hooks)).To(Succeed())
		var found *admissionregistrationv1.MutatingWebhook
		for i := range hooks.Items {
			for j := range hooks.Items[i].Webhooks {
				if w := &hooks.Items[i].Webhooks[j]; w.Name == "mlauncherpod-v1.kubevirt.rackwire.metal3.io" {
					found = w
				}
			}
		}
		Expect(found).NotTo(BeNil())
		Expect(found.ObjectSelector.MatchLabels).To(Equal(map[string]string{"kubevirt.io": "virt-launcher"}))
		// Out of every VM's start path: the CNI plugin finds the claim itself when the webhook
		// is down, and a pod without secondary networks is never sent.
		Expect(*found.FailurePolicy).To(Equal(admissionregistrationv1.Ignore))
		Expect(found.MatchConditions).NotTo(BeEmpty())
		Expect(*found.TimeoutSeconds).To(BeEquivalentTo(3))

		createNAD("orange", "orange-net", true, `"range":"10.10.8.0/24"`)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: "virt-launcher-ghost-", Namespace: vmNS,
				Labels: map[string]string{"kubevirt.io": "virt-launcher"},
				Annotations: map[string]string{
					"kubevirt.io/domain": "ghost", nadv1.NetworkAttachmentAnnot: `[{"name":"orange","namespace":"nets"}]`,
				},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "virt-launcher"}}},
		}
		Expect(k8s.Create(ctx, pod)).To(MatchError(ContainSubstring("VirtualMachineInstance vms/ghost not found")))
	})
})
