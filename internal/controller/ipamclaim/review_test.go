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
	"encoding/json"
	"strings"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
)

var _ = Describe("Review of the persistent-IP path", func() {
	It("gives each of two VM networks on one NAD its own claim in the launcher pod", func() {
		createNAD("twin", "twin-net", true, `"range":"10.10.30.0/24"`)
		vm := createVM("vm-twin", vmNet{"a", "twin"}, vmNet{"b", "twin"})
		ipsA, ipsB := allocatedIPs("vm-twin.a"), allocatedIPs("vm-twin.b")
		Expect(ipsA).NotTo(Equal(ipsB))

		_, pod := start(vm)
		var elems []map[string]any
		Expect(json.Unmarshal([]byte(pod.Annotations[nadv1.NetworkAttachmentAnnot]), &elems)).To(Succeed())
		var refs []any
		for _, e := range elems {
			refs = append(refs, e["ipam-claim-reference"])
		}
		// Each interface its own claim (which is which follows KubeVirt's pod interface names).
		Expect(refs).To(ConsistOf("vm-twin.a", "vm-twin.b"))
	})

	It("holds a running VM's address again when its reservation is deleted by hand", func() {
		createNAD("handdel", "handdel-net", true, `"range":"10.10.32.0/24"`)
		createVM("vm-hd", vmNet{"handdel", "handdel"})
		Expect(allocatedIPs("vm-hd.handdel")).To(Equal([]string{"10.10.32.1/24"}))
		orip, err := reservation("10.10.32.1")
		Expect(err).NotTo(HaveOccurred())

		By("a person deletes the reservation: the address looks free to every pod of the network")
		Expect(k8s.Delete(ctx, orip)).To(Succeed())
		// keep() recreates a missing reservation, but nothing wakes the claim: the deletion of a
		// reservation wakes only the claims still waiting for an address.
		Eventually(func(g Gomega) {
			o, err := reservation("10.10.32.1")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(o.Spec.PodRef).To(Equal(vmNS + "/vm-hd.handdel"))
		}, 20*time.Second).Should(Succeed())
	})

	It("gives a VM the claim of its new NAD once the old claim is deleted, as the conflict condition advises", func() {
		createNAD("move-a", "move-net", true, `"range":"10.10.33.0/24"`)
		createNAD("move-b", "move-net", true, `"range":"10.10.34.0/24"`)
		vm := createVM("vm-mv", vmNet{"mv", "move-a"})
		Expect(allocatedIPs("vm-mv.mv")).To(Equal([]string{"10.10.33.1/24"}))

		By("the stopped VM now names NAD move-b for the network: a conflict, which says to delete the claim")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vm), vm)).To(Succeed())
		vm.Spec.Template.Spec.Networks[1].Multus.NetworkName = "nets/move-b"
		Expect(k8s.Update(ctx, vm)).To(Succeed())
		Eventually(vmCondition("vm-mv", ipamclaim.ConditionClaimConflict)).Should(ContainSubstring(
			"IPAMClaim vm-mv.mv was made for NetworkAttachmentDefinition nets/move-a, the VM now names nets/move-b; delete the claim"))

		By("the claim deleted as advised: the VM (with no VMI) gets a claim from move-b")
		Expect(k8s.Delete(ctx, getClaim("vm-mv.mv"))).To(Succeed())
		Eventually(func(g Gomega) {
			c := &ipamclaimsv1alpha1.IPAMClaim{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: vmNS, Name: "vm-mv.mv"}, c)).To(Succeed())
			g.Expect(c.DeletionTimestamp).To(BeNil())
			g.Expect(c.Annotations).To(HaveKeyWithValue(ipamclaim.NADAnnotation, "nets/move-b"))
			g.Expect(c.Status.IPs).To(Equal([]string{"10.10.34.1/24"}))
		}, 20*time.Second).Should(Succeed())
	})

	It("refuses a recreated VM's launcher pod the claim of the earlier VM of its name", func() {
		createNAD("again", "again-net", true, `"range":"10.10.35.0/24"`)
		old := createVM("vm-again", vmNet{"ag", "again"})
		Expect(allocatedIPs("vm-again.ag")).To(Equal([]string{"10.10.35.1/24"}))
		Expect(k8s.Delete(ctx, old)).To(Succeed())
		Eventually(func() []string { return getClaim("vm-again.ag").Finalizers }).Should(Equal([]string{ipamclaim.Finalizer}))

		By("the VM created again before the garbage collector deleted the earlier VM's claim")
		vm := createVM("vm-again", vmNet{"ag", "again"})
		vmi := startVMI(vm)
		// Admitted with that claim, the pod would keep its address after the garbage collector
		// deletes the claim and rackwire releases the address.
		Expect(k8s.Create(ctx, launcherPod(vmi))).To(MatchError(ContainSubstring("IPAMClaim vm-again.ag belongs to an earlier")))
		Expect(k8s.Delete(ctx, vmi)).To(Succeed())
	})

	It("refuses a hand-made pod posing as a VM's launcher pod the VM's claim", func() {
		createNAD("posed", "posed-net", true, `"range":"10.10.36.0/24"`)
		vm := createVM("vm-posed", vmNet{"ps", "posed"})
		Expect(allocatedIPs("vm-posed.ps")).To(Equal([]string{"10.10.36.1/24"}))

		By("a pod with the launcher's label and annotations while the VM is stopped (no VMI)")
		vmi := &virtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Namespace: vmNS},
			Spec: vm.Spec.Template.Spec}
		posing := launcherPod(vmi)
		posing.OwnerReferences = nil
		Expect(k8s.Create(ctx, posing)).To(MatchError(ContainSubstring("not found")))

		By("the same pod while the VM runs: the VMI is not its controller")
		vmi = startVMI(vm)
		posing = launcherPod(vmi)
		posing.OwnerReferences = nil
		Expect(k8s.Create(ctx, posing)).To(MatchError(ContainSubstring("is not controlled by VirtualMachineInstance vm-posed")))
		posing = launcherPod(vmi)
		posing.OwnerReferences[0].UID = "uid-of-nothing"
		Expect(k8s.Create(ctx, posing)).To(MatchError(ContainSubstring("is not controlled by VirtualMachineInstance vm-posed")))

		By("the VMI's own launcher pod")
		pod := launcherPod(vmi)
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		Expect(claimRefs(pod)).To(Equal(map[string]string{"posed": "vm-posed.ps"}))
		Expect(k8s.Delete(ctx, vmi)).To(Succeed())
	})

	It("keeps the claims of a VM deleted with --cascade=orphan, as ipam-extensions does, until they are deleted", func() {
		createNAD("orphan", "orphan-net", true, `"range":"10.10.37.0/24"`)
		vm := createVM("vm-orphan", vmNet{"or", "orphan"})
		Expect(allocatedIPs("vm-orphan.or")).To(Equal([]string{"10.10.37.1/24"}))

		By("kubectl delete vm --cascade=orphan: the garbage collector strips the owner from the claim, then lets the VM go")
		Expect(k8s.Delete(ctx, vm, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
		Eventually(func() error {
			claim := getClaim("vm-orphan.or")
			claim.OwnerReferences = nil
			return k8s.Update(ctx, claim)
		}).Should(Succeed())
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(vm), vm); err != nil {
				return err
			}
			vm.Finalizers = nil
			return k8s.Update(ctx, vm)
		}).Should(Succeed())
		Eventually(gone(vm)).Should(BeTrue())

		By("the claim stays with its address, no longer held for the VM: deleting it is the user's")
		Eventually(func() []string { return getClaim("vm-orphan.or").Finalizers }).Should(Equal([]string{ipamclaim.Finalizer}))
		Consistently(func() []string { return getClaim("vm-orphan.or").Status.IPs }, 2*time.Second).Should(Equal([]string{"10.10.37.1/24"}))
		_, err := reservation("10.10.37.1")
		Expect(err).NotTo(HaveOccurred())

		By("a VM created again under the name is told the claim is in the way")
		again := createVM("vm-orphan", vmNet{"or", "orphan"})
		Eventually(vmCondition(again.Name, ipamclaim.ConditionClaimConflict)).Should(ContainSubstring("no VM controls it"))

		By("deleted, the claim lets its address go and the VM gets a claim of its own")
		orphaned := getClaim("vm-orphan.or")
		Expect(k8s.Delete(ctx, orphaned)).To(Succeed())
		Eventually(func() string {
			c := &ipamclaimsv1alpha1.IPAMClaim{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: vmNS, Name: "vm-orphan.or"}, c); err != nil {
				return err.Error()
			}
			if c.UID == orphaned.UID || metav1.GetControllerOf(c) == nil || metav1.GetControllerOf(c).UID != again.UID {
				return "the orphaned claim is still there"
			}
			// The lowest free address again: the orphaned claim's, released.
			return strings.Join(c.Status.IPs, ",")
		}).Should(Equal("10.10.37.1/24"))
		orip, err := reservation("10.10.37.1")
		Expect(err).NotTo(HaveOccurred())
		Expect(orip.Spec.PodRef).To(Equal(vmNS + "/vm-orphan.or"))
	})

	It("leaves alone another plugin's claim whose network name a rackwire NAD elsewhere also uses", func() {
		createNAD("cyan-rw", "cyan-net", true, `"range":"10.10.41.0/24"`)
		// OVN-Kubernetes' NAD of the VM's network, and the claim kubevirt/ipam-extensions makes
		// for it: no NAD annotation (ipam-extensions records none), spec.network the NAD's name.
		ovn := &nadv1.NetworkAttachmentDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "blue-ovn", Namespace: vmNS},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"cyan-net","type":"ovn-k8s-cni-overlay",` +
				`"topology":"layer2","subnets":"10.10.41.0/24","allowPersistentIPs":true,"netAttachDefName":"vms/blue-ovn"}`},
		}
		Expect(k8s.Create(ctx, ovn)).To(Succeed())
		vm := &virtv1.VirtualMachine{
			ObjectMeta: metav1.ObjectMeta{Name: "vm-ovn", Namespace: vmNS},
			Spec: virtv1.VirtualMachineSpec{RunStrategy: ptr.To(virtv1.RunStrategyHalted),
				Template: &virtv1.VirtualMachineInstanceTemplateSpec{Spec: vmiSpec()}},
		}
		vm.Spec.Template.Spec.Networks = append(vm.Spec.Template.Spec.Networks,
			virtv1.Network{Name: "blue", NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: "blue-ovn"}}})
		Expect(k8s.Create(ctx, vm)).To(Succeed())
		claim := &ipamclaimsv1alpha1.IPAMClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "vm-ovn.blue", Namespace: vmNS, Labels: map[string]string{ipamclaim.VMLabel: "vm-ovn"},
				Finalizers:      []string{ipamclaim.VMFinalizer},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, virtv1.VirtualMachineGroupVersionKind)}},
			Spec: ipamclaimsv1alpha1.IPAMClaimSpec{Network: "cyan-net", Interface: "podblue"},
		}
		Expect(k8s.Create(ctx, claim)).To(Succeed())
		// OVN-Kubernetes allocates it.
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		claim.Status.IPs = []string{"10.10.41.7/24"}
		Expect(k8s.Status().Update(ctx, claim)).To(Succeed())

		Consistently(func(g Gomega) {
			c := getClaim("vm-ovn.blue")
			g.Expect(c.Finalizers).To(Equal([]string{ipamclaim.VMFinalizer}))
			g.Expect(c.Status.Conditions).To(BeEmpty())
			_, err := reservation("10.10.41.7")
			g.Expect(err).To(MatchError(ContainSubstring("not found")))
		}, 3*time.Second).Should(Succeed())
	})

	It("gives the claim name to the second of two colliding VMs once the first is gone", func() {
		createNAD("coll", "coll-net", true, `"range":"10.10.42.0/24"`)
		first := createVM("web", vmNet{"prod_net", "coll"})
		Expect(allocatedIPs("web.prod.net")).To(Equal([]string{"10.10.42.1/24"}))
		second := createVM("web.prod", vmNet{"net", "coll"})
		Eventually(vmCondition("web.prod", ipamclaim.ConditionClaimConflict)).Should(HavePrefix("True: "))

		By("the first VM is deleted and the garbage collector removes its claim")
		Expect(k8s.Delete(ctx, first)).To(Succeed())
		Eventually(func() []string { return getClaim("web.prod.net").Finalizers }).Should(Equal([]string{ipamclaim.Finalizer}))
		collectGarbage(first)

		By("the second VM gets the claim, and its conflict goes")
		Eventually(func(g Gomega) {
			c := &ipamclaimsv1alpha1.IPAMClaim{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: vmNS, Name: "web.prod.net"}, c)).To(Succeed())
			g.Expect(metav1.GetControllerOf(c).UID).To(Equal(second.UID))
		}, 20*time.Second).Should(Succeed())
		Eventually(vmCondition("web.prod", ipamclaim.ConditionClaimConflict)).Should(Equal("none"))
	})

	It("releases a hot-unplugged network's claim while another network of the VM stays on the same NAD", func() {
		createNAD("pair", "pair-net", true, `"range":"10.10.43.0/24"`)
		vm := createVM("vm-pair", vmNet{"a", "pair"}, vmNet{"b", "pair"})
		allocatedIPs("vm-pair.a")
		allocatedIPs("vm-pair.b")
		claimB := getClaim("vm-pair.b")
		vmi, pod := start(vm)

		By("network b unplugged: gone from the VM's template (absent), the VMI, its status and the pod")
		markAbsent := func(spec *virtv1.VirtualMachineInstanceSpec) {
			for i := range spec.Domain.Devices.Interfaces {
				if spec.Domain.Devices.Interfaces[i].Name == "b" {
					spec.Domain.Devices.Interfaces[i].State = virtv1.InterfaceStateAbsent
				}
			}
		}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vm), vm)).To(Succeed())
		markAbsent(&vm.Spec.Template.Spec)
		Expect(k8s.Update(ctx, vm)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(vmi), vmi)).To(Succeed())
		markAbsent(&vmi.Spec)
		vmi.Status.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "a", IP: "10.10.43.1"}}
		Expect(k8s.Update(ctx, vmi)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		pod.Annotations[nadv1.NetworkAttachmentAnnot] = `[{"name":"pair","namespace":"nets","interface":"poda","ipam-claim-reference":"vm-pair.a"}]`
		pod.Annotations[nadv1.NetworkStatusAnnot] = `[{"name":"nets/pair","interface":"poda","ips":["10.10.43.1"]}]`
		Expect(k8s.Update(ctx, pod)).To(Succeed())

		By("network a still uses NAD pair; b's claim and address go")
		Eventually(gone(claimB), 20*time.Second).Should(BeTrue())
		Expect(getClaim("vm-pair.a").DeletionTimestamp).To(BeNil())
	})
})
