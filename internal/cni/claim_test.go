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
	"strings"
	"testing"
	"time"

	ipamclaims "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// launcher creates a virt-launcher pod of VM vm ("" for a plain pod) with these
// network-selection elements.
func launcher(t *testing.T, vm, name, elements string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tenant",
		Annotations: map[string]string{"k8s.v1.cni.cncf.io/networks": elements}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "virt-launcher"}}}}
	if vm != "" {
		pod.Labels = map[string]string{"kubevirt.io": "virt-launcher"}
		pod.Annotations["kubevirt.io/domain"] = vm
		// As virt-controller makes it: controlled by the VM's VMI, which the VM controls
		// (the VM's UID is the one claimWithIPs gives the VM's claims).
		vmi := vmiOf(t, vm)
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance", Name: vm,
			UID: vmi.UID, Controller: ptr.To(true)}}
	}
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// vmiOf is VM vm's VMI, created controlled by the VM (UID "uid-<vm>") unless it exists.
func vmiOf(t *testing.T, vm string) *virtv1.VirtualMachineInstance {
	t.Helper()
	ctx := context.Background()
	vmi := &virtv1.VirtualMachineInstance{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "tenant", Name: vm}, vmi); err == nil {
		return vmi
	}
	vmi = &virtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: vm, Namespace: "tenant",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: vm,
			UID: types.UID("uid-" + vm), Controller: ptr.To(true)}}}}
	if err := k8s.Create(ctx, vmi); err != nil {
		t.Fatal(err)
	}
	return vmi
}

// claimWithIPs creates the claim rackwire's VM controller makes for VM vm on NAD nad
// ("<namespace>/<name>"), with these addresses in status.ips.
func claimWithIPs(t *testing.T, vm, nad, name, network string, ips ...string) *ipamclaims.IPAMClaim {
	t.Helper()
	ctx := context.Background()
	c := &ipamclaims.IPAMClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tenant",
		Labels:      map[string]string{"kubevirt.io/vm": vm},
		Annotations: map[string]string{"rackwire.metal3.io/network-attachment-definition": nad},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: vm,
			UID: types.UID("uid-" + vm), Controller: ptr.To(true)}}},
		Spec: ipamclaims.IPAMClaimSpec{Network: network, Interface: "net1"}}
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	if len(ips) > 0 {
		setClaimIPs(t, c, ips...)
	}
	return c
}

func setClaimIPs(t *testing.T, c *ipamclaims.IPAMClaim, ips ...string) {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c); err != nil {
		t.Error(err)
		return
	}
	c.Status.IPs = ips
	if err := k8s.Status().Update(context.Background(), c); err != nil {
		t.Error(err)
	}
}

// TestPersistentIPs: the claim's addresses on ADD (waiting for them), the same on a new
// launcher pod, none of them freed by DEL or GC, and plain pods never given them.
func TestPersistentIPs(t *testing.T) {
	t.Setenv("NODENAME", "node-p")
	conf := netConf("1.1.0", "persist", `"range":"10.71.0.0/24"`, `"allowPersistentIPs":true`)
	claimWithIPs(t, "vm1", "tenant/pnet", "vm1.pnet", "persist", "10.71.0.1/24")
	// The manager's reservation of the claim's address, as it writes it.
	orip := &wbv1.OverlappingRangeIPReservation{ObjectMeta: metav1.ObjectMeta{Name: "persist-10.71.0.1", Namespace: poolNS},
		Spec: wbv1.OverlappingRangeIPReservationSpec{PodRef: "tenant/vm1.pnet"}}
	if err := k8s.Create(context.Background(), orip); err != nil {
		t.Fatal(err)
	}
	launcher(t, "vm1", "virt-launcher-vm1-a", `[{"name":"pnet","namespace":"tenant","ipam-claim-reference":"vm1.pnet"}]`)
	vm := attachment{conf: conf, container: "c-vm1-a", pod: "virt-launcher-vm1-a"}
	if got := addrs(vm.mustAdd(t)); len(got) != 1 || got[0] != "10.71.0.1/24" {
		t.Fatalf("launcher pod got %v, want the claim's 10.71.0.1/24", got)
	}
	// A plain pod on the network: the claim's address is not its.
	plain := attachment{conf: conf, container: "c-plain", pod: "plain"}
	launcher(t, "", "plain", `[{"name":"pnet","namespace":"tenant"}]`)
	if got := addrs(plain.mustAdd(t)); got[0] == "10.71.0.1/24" {
		t.Fatalf("a plain pod got the claim's address")
	}
	// Live migration: a second launcher pod holds the claim at the same time.
	launcher(t, "vm1", "virt-launcher-vm1-b", `[{"name":"pnet","namespace":"tenant","interface":"net1","ipam-claim-reference":"vm1.pnet"}]`)
	target := attachment{conf: conf, container: "c-vm1-b", pod: "virt-launcher-vm1-b"}
	if got := addrs(target.mustAdd(t)); got[0] != "10.71.0.1/24" {
		t.Fatalf("migration target got %v", got)
	}
	for _, a := range []attachment{vm, target} {
		if err := a.del(); err != nil {
			t.Fatal(err)
		}
	}
	if got := ippool(t, "persist-10.71.0.0-24").Spec.Allocations; len(got) != 1 {
		t.Errorf("DEL of launcher pods changed the pool: %v", got)
	}

	// A claim the manager has not filled yet: ADD waits for it.
	c := claimWithIPs(t, "vm2", "tenant/pnet", "vm2.pnet", "persist")
	launcher(t, "vm2", "virt-launcher-vm2", `[{"name":"pnet","namespace":"tenant","ipam-claim-reference":"vm2.pnet"}]`)
	go func() {
		time.Sleep(time.Second)
		setClaimIPs(t, c, "10.71.0.200/24")
	}()
	if got := addrs(attachment{conf: conf, container: "c-vm2", pod: "virt-launcher-vm2"}.mustAdd(t)); got[0] != "10.71.0.200/24" {
		t.Errorf("waiting ADD got %v", got)
	}

	// A reference to another network's claim is refused.
	claimWithIPs(t, "vm3", "tenant/other", "vm3.other", "other-net", "10.99.0.1/24")
	launcher(t, "vm3", "virt-launcher-vm3", `[{"name":"pnet","namespace":"tenant","ipam-claim-reference":"vm3.other"}]`)
	_, _, err := attachment{conf: conf, container: "c-vm3", pod: "virt-launcher-vm3"}.add()
	if err == nil || !strings.Contains(err.Error(), `is a claim on network "other-net"`) {
		t.Errorf("claim of another network: %v", err)
	}
	// Without allowPersistentIPs the reference is not followed.
	noPersist := netConf("1.1.0", "persist", `"range":"10.71.0.0/24"`)
	if got := addrs(attachment{conf: noPersist, container: "c-vm1-c", pod: "virt-launcher-vm1-a"}.mustAdd(t)); got[0] == "10.71.0.1/24" {
		t.Errorf("a network without allowPersistentIPs handed out the claim's address: %v", got)
	}
}

// TestClaimOwnership: a claim serves its own VM's launcher pods on the NAD it was made for,
// and nothing else; a launcher pod without a reference (the webhook was down) finds its VM's
// claim itself.
func TestClaimOwnership(t *testing.T) {
	t.Setenv("NODENAME", "node-o")
	ctx := context.Background()
	conf := netConf("1.1.0", "owned", `"range":"10.72.0.0/24"`, `"allowPersistentIPs":true`)
	claimWithIPs(t, "vma", "tenant/onet", "vma.onet", "owned", "10.72.0.10/24")

	refused := func(name, vm, elements, want string) {
		t.Helper()
		launcher(t, vm, name, elements)
		res, _, err := attachment{conf: conf, container: "c-" + name, pod: name}.add()
		if err == nil {
			t.Errorf("%s: got %v; want an error with %q", name, addrs(res), want)
		} else if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v; want an error with %q", name, err, want)
		}
	}
	// Claim names collide: VM "vmb" may not take VM "vma"'s claim, nor may a plain pod.
	refused("virt-launcher-vmb", "vmb", `[{"name":"onet","namespace":"tenant","ipam-claim-reference":"vma.onet"}]`,
		"IPAMClaim vma.onet belongs to VirtualMachine vma, not to VM vmb")
	refused("plain-thief", "", `[{"name":"onet","namespace":"tenant","ipam-claim-reference":"vma.onet"}]`,
		"IPAMClaim vma.onet belongs to VirtualMachine vma, and the pod is no virt-launcher pod of it")
	// The claim was made for NAD tenant/onet; the pod attaches through tenant/onet-copy.
	refused("virt-launcher-vma-x", "vma", `[{"name":"onet-copy","namespace":"tenant","ipam-claim-reference":"vma.onet"}]`,
		"was made for NetworkAttachmentDefinition tenant/onet, not tenant/onet-copy")
	// A claim nobody controls.
	loose := &ipamclaims.IPAMClaim{ObjectMeta: metav1.ObjectMeta{Name: "loose.onet", Namespace: "tenant"},
		Spec: ipamclaims.IPAMClaimSpec{Network: "owned", Interface: "net1"}}
	if err := k8s.Create(ctx, loose); err != nil {
		t.Fatal(err)
	}
	setClaimIPs(t, loose, "10.72.0.11/24")
	refused("virt-launcher-loose", "loose", `[{"name":"onet","namespace":"tenant","ipam-claim-reference":"loose.onet"}]`,
		"IPAMClaim loose.onet is controlled by no VirtualMachine")
	// A claim being deleted (held by a finalizer): its addresses are on their way out.
	going := claimWithIPs(t, "vmg", "tenant/onet", "vmg.onet", "owned", "10.72.0.12/24")
	going.Finalizers = []string{"test.rackwire.metal3.io/hold"}
	if err := k8s.Update(ctx, going); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, going); err != nil {
		t.Fatal(err)
	}
	refused("virt-launcher-vmg", "vmg", `[{"name":"onet","namespace":"tenant","ipam-claim-reference":"vmg.onet"}]`,
		"IPAMClaim vmg.onet is being deleted")
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(going), going); err != nil {
		t.Fatal(err)
	}
	going.Finalizers = nil
	if err := k8s.Update(ctx, going); err != nil {
		t.Error(err)
	}

	// No reference in the element: the launcher pod's own claim for that NAD, found by the
	// plugin (another claim of the VM, on another NAD, is not it).
	claimWithIPs(t, "vmf", "tenant/other-nad", "vmf.other", "owned", "10.72.0.21/24")
	claimWithIPs(t, "vmf", "tenant/onet", "vmf.onet", "owned", "10.72.0.20/24")
	launcher(t, "vmf", "virt-launcher-vmf", `[{"name":"onet","namespace":"tenant","interface":"net1"}]`)
	if got := addrs(attachment{conf: conf, container: "c-vmf", pod: "virt-launcher-vmf"}.mustAdd(t)); len(got) != 1 || got[0] != "10.72.0.20/24" {
		t.Errorf("launcher pod without a reference got %v, want its claim's 10.72.0.20/24", got)
	}
}
