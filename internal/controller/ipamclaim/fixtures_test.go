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
	"fmt"
	"strings"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
)

// createNAD writes a NAD in namespace "nets" whose bridge plugin uses rackwire's IPAM with
// the given ipam keys (JSON object members) and, when persistent, allowPersistentIPs.
func createNAD(name, network string, persistent bool, ipam string) *nadv1.NetworkAttachmentDefinition {
	config := fmt.Sprintf(`{"cniVersion":"1.0.0","name":%q,"type":"bridge","bridge":"br1","allowPersistentIPs":%v,"ipam":{"type":"rackwire",%s}}`,
		network, persistent, ipam)
	nad := &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "nets"},
		Spec:       nadv1.NetworkAttachmentDefinitionSpec{Config: config},
	}
	ExpectWithOffset(1, k8s.Create(ctx, nad)).To(Succeed())
	return nad
}

// vmNet is one secondary network of a VM: its logical name and NAD ("nets/<nad>").
type vmNet struct{ name, nad string }

func vmiSpec(nets ...vmNet) virtv1.VirtualMachineInstanceSpec {
	spec := virtv1.VirtualMachineInstanceSpec{
		Domain: virtv1.DomainSpec{Devices: virtv1.Devices{Interfaces: []virtv1.Interface{
			{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}}},
		}}},
		Networks: []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}},
	}
	for _, n := range nets {
		spec.Domain.Devices.Interfaces = append(spec.Domain.Devices.Interfaces,
			virtv1.Interface{Name: n.name, InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}})
		spec.Networks = append(spec.Networks,
			virtv1.Network{Name: n.name, NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: "nets/" + n.nad}}})
	}
	return spec
}

// createVM writes a stopped VM (the claims come before the first boot).
func createVM(name string, nets ...vmNet) *virtv1.VirtualMachine {
	vm := &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: vmNS},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy: ptr.To(virtv1.RunStrategyHalted),
			Template:    &virtv1.VirtualMachineInstanceTemplateSpec{Spec: vmiSpec(nets...)},
		},
	}
	ExpectWithOffset(1, k8s.Create(ctx, vm)).To(Succeed())
	return vm
}

// start does what virt-controller does when a VM starts: the VMI (owned by the VM, with
// KubeVirt's finalizer so that its deletion waits as in a cluster), then the launcher pod,
// which the webhook sees. It returns the pod as admitted.
func start(vm *virtv1.VirtualMachine) (*virtv1.VirtualMachineInstance, *corev1.Pod) {
	vmi := startVMI(vm)
	pod := launcherPod(vmi)
	ExpectWithOffset(1, k8s.Create(ctx, pod)).To(Succeed())
	return vmi, pod
}

// startVMI creates the VMI of a VM as virt-controller does, before its launcher pod.
func startVMI(vm *virtv1.VirtualMachine) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Name: vm.Name, Namespace: vm.Namespace, Labels: map[string]string{ipamclaim.VMLabel: vm.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, virtv1.VirtualMachineGroupVersionKind)},
		},
		Spec: vm.Spec.Template.Spec,
	}
	ExpectWithOffset(2, k8s.Create(ctx, vmi)).To(Succeed())
	return vmi
}

// launcherPod is the virt-launcher pod of a VMI, not yet created.
func launcherPod(vmi *virtv1.VirtualMachineInstance) *corev1.Pod {
	var elems []map[string]string
	for _, n := range vmi.Spec.Networks {
		if n.Multus != nil {
			ns, name, _ := strings.Cut(n.Multus.NetworkName, "/")
			elems = append(elems, map[string]string{"name": name, "namespace": ns, "interface": "pod" + n.Name})
		}
	}
	nets, err := json.Marshal(elems)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "virt-launcher-" + vmi.Name + "-", Namespace: vmi.Namespace,
			Labels:      map[string]string{"kubevirt.io": "virt-launcher", ipamclaim.VMLabel: vmi.Name},
			Annotations: map[string]string{"kubevirt.io/domain": vmi.Name, nadv1.NetworkAttachmentAnnot: string(nets)},
			// virt-controller makes its VMI the pod's controller.
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, virtv1.VirtualMachineInstanceGroupVersionKind)},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "virt-launcher"}}},
	}
}

// vmCondition reads a VM's condition of that type as "<status>: <message>", "none" without one.
func vmCondition(name string, typ virtv1.VirtualMachineConditionType) func() string {
	return func() string {
		vm := &virtv1.VirtualMachine{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: vmNS, Name: name}, vm); err != nil {
			return err.Error()
		}
		for _, c := range vm.Status.Conditions {
			if c.Type == typ {
				return string(c.Status) + ": " + c.Message
			}
		}
		return "none"
	}
}

// stop does what virt-controller does when a VM stops: the launcher pod and the VMI go.
func stop(vmi *virtv1.VirtualMachineInstance, pod *corev1.Pod) {
	ExpectWithOffset(1, k8s.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	ExpectWithOffset(1, k8s.Delete(ctx, vmi)).To(Succeed())
	EventuallyWithOffset(1, func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(vmi), &virtv1.VirtualMachineInstance{}))
	}).Should(BeTrue())
}

// claimRefs reads the ipam-claim-reference of each element of the pod's networks annotation.
func claimRefs(pod *corev1.Pod) map[string]string {
	var elems []map[string]any
	ExpectWithOffset(1, json.Unmarshal([]byte(pod.Annotations[nadv1.NetworkAttachmentAnnot]), &elems)).To(Succeed())
	out := map[string]string{}
	for _, e := range elems {
		ref, _ := e["ipam-claim-reference"].(string)
		out[e["name"].(string)] = ref
	}
	return out
}

func getClaim(name string) *ipamclaimsv1alpha1.IPAMClaim {
	c := &ipamclaimsv1alpha1.IPAMClaim{}
	ExpectWithOffset(1, k8s.Get(ctx, client.ObjectKey{Namespace: vmNS, Name: name}, c)).To(Succeed())
	return c
}

// allocatedIPs waits for the claim's status.ips and returns them.
func allocatedIPs(name string) []string {
	var ips []string
	EventuallyWithOffset(1, func(g Gomega) {
		c := &ipamclaimsv1alpha1.IPAMClaim{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: vmNS, Name: name}, c)).To(Succeed())
		g.Expect(c.Status.IPs).NotTo(BeEmpty())
		ips = c.Status.IPs
	}).Should(Succeed())
	return ips
}

// condition reads the claim's IPsAllocated condition as "<status> <reason>".
func condition(name string) func() string {
	return func() string {
		c := &ipamclaimsv1alpha1.IPAMClaim{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: vmNS, Name: name}, c); err != nil {
			return err.Error()
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, ipamclaim.ConditionAllocated)
		if cond == nil {
			return "none"
		}
		return string(cond.Status) + " " + cond.Reason
	}
}

// reservation reads the OverlappingRangeIPReservation of an address.
func reservation(name string) (*nodeslicev1alpha1.OverlappingRangeIPReservation, error) {
	o := &nodeslicev1alpha1.OverlappingRangeIPReservation{}
	return o, k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: name}, o)
}

func gone(obj client.Object) func() bool {
	return func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)) }
}

// collectGarbage deletes the claims whose owner is gone or being deleted in the foreground,
// as kube-controller-manager's garbage collector would (the test control plane runs none).
func collectGarbage(owner client.Object) {
	var list ipamclaimsv1alpha1.IPAMClaimList
	ExpectWithOffset(1, k8s.List(ctx, &list, client.InNamespace(owner.GetNamespace()))).To(Succeed())
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == owner.GetUID() {
			ExpectWithOffset(1, client.IgnoreNotFound(k8s.Delete(ctx, &list.Items[i]))).To(Succeed())
		}
	}
}

// eventNotes lists "reason: note" of the Events about an object.
func eventNotes(ns, name string) func() string {
	return func() string {
		list := &eventsv1.EventList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				out = append(out, e.Reason+": "+e.Note)
			}
		}
		return strings.Join(out, "\n")
	}
}
