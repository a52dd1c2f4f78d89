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

package cni_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestTwoInterfacesOnOneNAD: a VM may attach two of its networks through the same NAD
// (networks "a" and "b", both tenant/twonad); rackwire's VM controller makes one claim for
// each ("vmt.a", "vmt.b"), each with its own address. A launcher pod admitted without
// references (the webhook was down) must not get the same address on both interfaces: each
// interface takes its own claim, or the plugin refuses the one it cannot tell apart.
func TestTwoInterfacesOnOneNAD(t *testing.T) {
	t.Setenv("NODENAME", "node-t")
	conf := netConf("1.1.0", "twonics", `"range":"10.81.0.0/24"`, `"allowPersistentIPs":true`)
	claimWithIPs(t, "vmt", "tenant/twonad", "vmt.a", "twonics", "10.81.0.30/24")
	claimWithIPs(t, "vmt", "tenant/twonad", "vmt.b", "twonics", "10.81.0.31/24")
	launcher(t, "vmt", "virt-launcher-vmt",
		`[{"name":"twonad","namespace":"tenant","interface":"poda"},{"name":"twonad","namespace":"tenant","interface":"podb"}]`)
	resA, _, errA := attachment{conf: conf, container: "c-vmt", ifName: "poda", pod: "virt-launcher-vmt"}.add()
	resB, _, errB := attachment{conf: conf, container: "c-vmt", ifName: "podb", pod: "virt-launcher-vmt"}.add()
	if errA != nil || errB != nil {
		return // refused: no address twice
	}
	if a, b := addrs(resA), addrs(resB); len(a) == 1 && len(b) == 1 && a[0] == b[0] {
		t.Errorf("both interfaces of VM vmt on NAD tenant/twonad got %s: claim vmt.a's address twice, vmt.b's unused", a[0])
	}
}

// TestClaimOfAnEarlierVMOfTheSameName: VM vmr was deleted and created again under the same
// name. The earlier VM's claim (controlled by the earlier VM's UID, its finalizer already
// let go) stays until the garbage collector deletes it, and rackwire then releases its
// address. The new VM's launcher pod must not take that claim's address: the pod would
// keep it after its release, and the next VM on the network would get it too.
func TestClaimOfAnEarlierVMOfTheSameName(t *testing.T) {
	t.Setenv("NODENAME", "node-r")
	ctx := context.Background()
	conf := netConf("1.1.0", "renet", `"range":"10.81.1.0/24"`, `"allowPersistentIPs":true`)
	// The earlier VM's claim: claimWithIPs makes it controlled by UID "uid-vmr".
	claimWithIPs(t, "vmr", "tenant/rnad", "vmr.rnet", "renet", "10.81.1.40/24")
	// The VM as it is now, its VMI and its launcher pod, each controlled by the one before.
	vm := &virtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vmr", Namespace: "tenant"},
		Spec: virtv1.VirtualMachineSpec{Template: &virtv1.VirtualMachineInstanceTemplateSpec{}}}
	if err := k8s.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	vmi := &virtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vmr", Namespace: "tenant",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vmr",
			UID: vm.UID, Controller: ptr.To(true)}}}}
	if err := k8s.Create(ctx, vmi); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-vmr", Namespace: "tenant",
		Labels: map[string]string{"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": string(vmi.UID)},
		Annotations: map[string]string{"kubevirt.io/domain": "vmr",
			"k8s.v1.cni.cncf.io/networks": `[{"name":"rnad","namespace":"tenant","interface":"net1","ipam-claim-reference":"vmr.rnet"}]`},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance", Name: "vmr",
			UID: vmi.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "virt-launcher"}}}}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	res, _, err := attachment{conf: conf, container: "c-vmr", pod: "virt-launcher-vmr"}.add()
	if err == nil {
		t.Errorf("the launcher pod of VM vmr (UID %s) got %v from IPAMClaim vmr.rnet, which belongs to the earlier VM vmr (UID uid-vmr)",
			vm.UID, addrs(res))
	}
}

// TestClaimAddressHeldByAPod: a claim's status.ips is only what the manager wrote; the
// address is the VM's while the claim's reservation holds it. When that reservation was
// deleted (by hand, or lost with a restored backup) and a pod's reservation took the
// address meanwhile, the manager reports AddressTaken on the claim, and the launcher pod
// must not be handed the address the pod already has.
func TestClaimAddressHeldByAPod(t *testing.T) {
	t.Setenv("NODENAME", "node-k")
	conf := netConf("1.1.0", "taken", `"range":"10.81.2.0/24"`, `"allowPersistentIPs":true`)
	claimWithIPs(t, "vmk", "tenant/knad", "vmk.knad", "taken", "10.81.2.5/24")
	// The pod's reservation, as the plugin writes it for a plain pod.
	orip := &wbv1.OverlappingRangeIPReservation{ObjectMeta: metav1.ObjectMeta{Name: "taken-10.81.2.5", Namespace: poolNS},
		Spec: wbv1.OverlappingRangeIPReservationSpec{PodRef: "tenant/web-1", ContainerID: "c-web-1", IfName: "net1"}}
	if err := k8s.Create(context.Background(), orip); err != nil {
		t.Fatal(err)
	}
	launcher(t, "vmk", "virt-launcher-vmk", `[{"name":"knad","namespace":"tenant","ipam-claim-reference":"vmk.knad"}]`)
	res, _, err := attachment{conf: conf, container: "c-vmk", pod: "virt-launcher-vmk"}.add()
	if err == nil {
		t.Errorf("launcher pod of VM vmk got %v, which pod tenant/web-1's reservation holds", addrs(res))
	}
}

// TestHandMadeLauncherPod: a label and an annotation make no launcher pod. Anyone who may
// create pods beside a VM can write kubevirt.io=virt-launcher and kubevirt.io/domain=<vm>;
// with the launcher-pod webhook down (it fails open) the plugin finds the VM's claim itself,
// and such a pod must not get the VM's address: only a pod the VM's VMI controls, the VMI
// the VM (the claim's controller) controls.
func TestHandMadeLauncherPod(t *testing.T) {
	t.Setenv("NODENAME", "node-h")
	ctx := context.Background()
	conf := netConf("1.1.0", "handnet", `"range":"10.81.3.0/24"`, `"allowPersistentIPs":true`)
	claimWithIPs(t, "vmh", "tenant/hnad", "vmh.hnet", "handnet", "10.81.3.50/24")
	vmi := vmiOf(t, "vmh")
	for name, owners := range map[string][]metav1.OwnerReference{
		"posing-no-owner": nil,
		"posing-other-vmi": {{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance", Name: "vmh",
			UID: "uid-of-nothing", Controller: ptr.To(true)}},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tenant",
			Labels: map[string]string{"kubevirt.io": "virt-launcher"},
			Annotations: map[string]string{"kubevirt.io/domain": "vmh",
				"k8s.v1.cni.cncf.io/networks": `[{"name":"hnad","namespace":"tenant","interface":"net1"}]`},
			OwnerReferences: owners},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "virt-launcher"}}}}
		if err := k8s.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		res, _, err := attachment{conf: conf, container: "c-" + name, ifName: "net1", pod: name}.add()
		if err == nil {
			t.Errorf("pod %s, not controlled by VMI vmh (UID %s), got %v from VM vmh's IPAMClaim vmh.hnet", name, vmi.UID, addrs(res))
		}
	}
	launcher(t, "vmh", "virt-launcher-vmh", `[{"name":"hnad","namespace":"tenant","interface":"net1"}]`)
	if got := addrs(attachment{conf: conf, container: "c-vmh", ifName: "net1", pod: "virt-launcher-vmh"}.mustAdd(t)); len(got) != 1 || got[0] != "10.81.3.50/24" {
		t.Errorf("VMI vmh's launcher pod got %v, want its claim's 10.81.3.50/24", got)
	}
}
