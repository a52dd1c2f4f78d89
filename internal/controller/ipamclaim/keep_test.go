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

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/scheme"
)

// TestReservationNotYetInTheCache: the claim's status write wakes its next reconcile, whose
// cache can show the new status.ips before the reservation created just before it (two
// informers, no order between them; in a burst of VMs on a loaded apiserver it happened to
// one claim in fifty). That reconcile must not take the reservation for missing: recreating
// it costs a write that answers AlreadyExists (a 409 per such claim) and a live read.
// (A fake client stands in for the cache: an informer's lag cannot be ordered in envtest.)
func TestReservationNotYetInTheCache(t *testing.T) {
	const ns, poolNS = "vms", "cni-pools"
	vm := &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-lag", Namespace: ns, UID: "uid-lag"},
		Spec: virtv1.VirtualMachineSpec{Template: &virtv1.VirtualMachineInstanceTemplateSpec{Spec: virtv1.VirtualMachineInstanceSpec{
			Networks: []virtv1.Network{{Name: "lag", NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: "nets/lag"}}}},
		}}},
	}
	nad := &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "lag", Namespace: "nets"},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"lag-net","type":"bridge","allowPersistentIPs":true,` +
			`"ipam":{"type":"rackwire","range":"10.10.41.0/24"}}`},
	}
	claim := &ipamclaimsv1alpha1.IPAMClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-lag.lag", Namespace: ns, UID: "claim-lag",
			Labels: map[string]string{VMLabel: "vm-lag"}, Annotations: map[string]string{NADAnnotation: "nets/lag"},
			Finalizers: []string{VMFinalizer, Finalizer},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-lag",
				UID: "uid-lag", Controller: ptr.To(true)}}},
		Spec:   ipamclaimsv1alpha1.IPAMClaimSpec{Network: "lag-net"},
		Status: ipamclaimsv1alpha1.IPAMClaimStatus{IPs: []string{"10.10.41.1/24"}},
	}
	held := &nodeslicev1alpha1.OverlappingRangeIPReservation{
		ObjectMeta: metav1.ObjectMeta{Name: "10.10.41.1", Namespace: poolNS,
			Labels: map[string]string{LabelClaim: "vm-lag.lag", LabelClaimNamespace: ns, LabelManagedBy: managedBy}},
		Spec: nodeslicev1alpha1.OverlappingRangeIPReservationSpec{PodRef: ns + "/vm-lag.lag"},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(vm, nad, claim, held).
		WithStatusSubresource(&ipamclaimsv1alpha1.IPAMClaim{}).
		WithIndex(&nadv1.NetworkAttachmentDefinition{}, nadNetworkIndex, func(o client.Object) []string {
			if n := persistentNetworkOf(o); n != "" {
				return []string{n}
			}
			return nil
		}).
		Build()
	var creates []string
	cache := interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*nodeslicev1alpha1.OverlappingRangeIPReservation); ok {
				return apierrors.NewNotFound(schema.GroupResource{Group: "whereabouts.cni.cncf.io", Resource: "overlappingrangeipreservations"}, key.Name)
			}
			return cl.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates = append(creates, obj.GetName())
			return cl.Create(ctx, obj, opts...)
		},
	})
	rec := events.NewFakeRecorder(10)
	r := &ClaimReconciler{Client: cache, Live: c, Recorder: rec, Namespace: poolNS, ScanReuse: -1, picks: newPicks()}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "vm-lag.lag"}}); err != nil {
		t.Fatal(err)
	}
	if len(creates) > 0 {
		t.Errorf("the reservation the cache did not show yet was created again (%v): a write answered AlreadyExists", creates)
	}
	if len(rec.Events) > 0 {
		t.Errorf("event for a reservation that was there all along: %s", <-rec.Events)
	}
}
