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

package ipamclaim

import (
	"context"
	"testing"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rackwire/rackwire/internal/scheme"
)

// TestStatusWriteFromAStaleReadKeepsIPs: a claim rackwire does not allocate for (its VM is
// gone) gets status.ips from someone else (a restore, the earlier VM's addresses) while a
// reconcile that read it before, without addresses, is under way. That reconcile's status
// write (NotServed, status.ips []) must not replace the addresses it never saw: it did, and
// the claim's address was left with no reservation, free for the next claim to take (the
// envtest spec "neither adopts nor deletes a claim of an old VM" timed out on it now and then).
// (A fake client stands in for the cache: an informer's lag cannot be ordered in envtest.)
func TestStatusWriteFromAStaleReadKeepsIPs(t *testing.T) {
	const ns, poolNS = "vms", "cni-pools"
	nad := &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "red", Namespace: "nets"},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"red-net","type":"bridge","allowPersistentIPs":true,` +
			`"ipam":{"type":"rackwire","range":"10.10.3.0/24"}}`},
	}
	claim := &ipamclaimsv1alpha1.IPAMClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-s.red", Namespace: ns, UID: "claim-s",
			Labels: map[string]string{VMLabel: "vm-s"}, Finalizers: []string{Finalizer},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-s",
				UID: "0ld-vm-uid", Controller: ptr.To(true)}}},
		Spec: ipamclaimsv1alpha1.IPAMClaimSpec{Network: "red-net"},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(nad, claim).
		WithStatusSubresource(&ipamclaimsv1alpha1.IPAMClaim{}).
		WithIndex(&nadv1.NetworkAttachmentDefinition{}, nadNetworkIndex, func(o client.Object) []string {
			if n := persistentNetworkOf(o); n != "" {
				return []string{n}
			}
			return nil
		}).
		Build()
	ctx := context.Background()
	key := types.NamespacedName{Namespace: ns, Name: "vm-s.red"}
	stale := &ipamclaimsv1alpha1.IPAMClaim{}
	if err := c.Get(ctx, key, stale); err != nil {
		t.Fatal(err)
	}
	// Written after the reconcile's read: the cache still shows the claim without them.
	live := stale.DeepCopy()
	live.Status.IPs = []string{"10.10.3.1/24"}
	if err := c.Status().Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	cache := interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if cl, ok := obj.(*ipamclaimsv1alpha1.IPAMClaim); ok && k == key {
				stale.DeepCopyInto(cl)
				return nil
			}
			return cl.Get(ctx, k, obj, opts...)
		},
	})
	r := &ClaimReconciler{Client: cache, Live: c, Recorder: events.NewFakeRecorder(10), Namespace: poolNS, ScanReuse: -1, picks: newPicks()}
	// An error (a conflict) is fine: the retry reads the claim again.
	_, _ = r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	got := &ipamclaimsv1alpha1.IPAMClaim{}
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.IPs) != 1 || got.Status.IPs[0] != "10.10.3.1/24" {
		t.Fatalf("status.ips written since the reconcile's read was replaced: %v, want [10.10.3.1/24]", got.Status.IPs)
	}
}

// TestVMNotYetInTheCacheKeepsItsClaim: ipam-extensions creates a VM's claim (for another
// plugin's network) right after the VM; the claim's event wakes the VM controller, whose
// cache may not show the VM yet. Taking the VM for gone, it dropped the VM's finalizer from
// the claim (the envtest spec "leaves alone another plugin's claim" failed on it now and then).
func TestVMNotYetInTheCacheKeepsItsClaim(t *testing.T) {
	const ns = "vms"
	vm := &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-ovn", Namespace: ns, UID: "uid-ovn"},
		Spec:       virtv1.VirtualMachineSpec{Template: &virtv1.VirtualMachineInstanceTemplateSpec{}},
	}
	claim := &ipamclaimsv1alpha1.IPAMClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-ovn.blue", Namespace: ns,
			Labels: map[string]string{VMLabel: "vm-ovn"}, Finalizers: []string{VMFinalizer},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-ovn",
				UID: "uid-ovn", Controller: ptr.To(true)}}},
		Spec: ipamclaimsv1alpha1.IPAMClaimSpec{Network: "cyan-net"},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(vm, claim).Build()
	cache := interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*virtv1.VirtualMachine); ok {
				return apierrors.NewNotFound(schema.GroupResource{Group: "kubevirt.io", Resource: "virtualmachines"}, k.Name)
			}
			return cl.Get(ctx, k, obj, opts...)
		},
	})
	r := &VMReconciler{Client: cache, Live: c, Recorder: events.NewFakeRecorder(10)}
	ctx := context.Background()
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "vm-ovn"}}); err != nil {
		t.Fatal(err)
	}
	got := &ipamclaimsv1alpha1.IPAMClaim{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(claim), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Finalizers) != 1 || got.Finalizers[0] != VMFinalizer {
		t.Fatalf("the claim of a VM that exists lost its finalizer: %v", got.Finalizers)
	}
}
