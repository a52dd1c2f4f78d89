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
	"net/netip"
	"testing"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/scheme"
)

// TestEarlierClaimsReservationInTheCache: VM vm-st was deleted and created again; the
// earlier VM's claim vm-st.st released its reservation of 10.10.40.1 and went, and the new
// VM's claim of the same name is reconciled while the informer cache (or a view of the
// network read just before the release) still shows that reservation. It carries the
// claim's name, so the new claim takes 10.10.40.1 as its own without creating a reservation:
// status.ips names an address nothing holds, which the next pod or claim of the network gets.
// (A fake client stands in for the cache: an informer's lag cannot be ordered in envtest.)
func TestEarlierClaimsReservationInTheCache(t *testing.T) {
	const ns, poolNS = "vms", "cni-pools"
	vm := &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-st", Namespace: ns, UID: "uid-new"},
		Spec: virtv1.VirtualMachineSpec{Template: &virtv1.VirtualMachineInstanceTemplateSpec{Spec: virtv1.VirtualMachineInstanceSpec{
			Networks: []virtv1.Network{{Name: "st", NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: "nets/stale"}}}},
		}}},
	}
	nad := &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "stale", Namespace: "nets"},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"stale-net","type":"bridge","allowPersistentIPs":true,` +
			`"ipam":{"type":"rackwire","range":"10.10.40.0/24"}}`},
	}
	claim := &ipamclaimsv1alpha1.IPAMClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-st.st", Namespace: ns, UID: "claim-new",
			Labels: map[string]string{VMLabel: "vm-st"}, Annotations: map[string]string{NADAnnotation: "nets/stale"},
			Finalizers: []string{VMFinalizer, Finalizer},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm-st",
				UID: "uid-new", Controller: ptr.To(true)}}},
		Spec: ipamclaimsv1alpha1.IPAMClaimSpec{Network: "stale-net"},
	}
	// The earlier claim's reservation: deleted on the apiserver, still in the cache.
	earlier := nodeslicev1alpha1.OverlappingRangeIPReservation{
		ObjectMeta: metav1.ObjectMeta{Name: "10.10.40.1", Namespace: poolNS,
			Labels: map[string]string{LabelClaim: "vm-st.st", LabelClaimNamespace: ns, LabelManagedBy: managedBy}},
		Spec: nodeslicev1alpha1.OverlappingRangeIPReservationSpec{PodRef: ns + "/vm-st.st"},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(vm, nad, claim).
		WithStatusSubresource(&ipamclaimsv1alpha1.IPAMClaim{}).
		WithIndex(&nadv1.NetworkAttachmentDefinition{}, nadNetworkIndex, func(o client.Object) []string {
			if n := persistentNetworkOf(o); n != "" {
				return []string{n}
			}
			return nil
		}).
		WithIndex(&ipamclaimsv1alpha1.IPAMClaim{}, claimNetworkIndex, func(o client.Object) []string {
			return []string{o.(*ipamclaimsv1alpha1.IPAMClaim).Spec.Network}
		}).
		Build()
	cache := interceptor.NewClient(c, interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := cl.List(ctx, list, opts...); err != nil {
				return err
			}
			if l, ok := list.(*nodeslicev1alpha1.OverlappingRangeIPReservationList); ok {
				l.Items = append(l.Items, earlier)
			}
			return nil
		},
	})
	r := &ClaimReconciler{Client: cache, Live: c, Recorder: events.NewFakeRecorder(10), Namespace: poolNS, ScanReuse: -1, picks: newPicks()}
	ctx := context.Background()
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "vm-st.st"}}); err != nil {
		t.Fatal(err)
	}
	got := &ipamclaimsv1alpha1.IPAMClaim{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(claim), got); err != nil {
		t.Fatal(err)
	}
	for _, ip := range got.Status.IPs {
		a := netip.MustParsePrefix(ip).Addr()
		o := &nodeslicev1alpha1.OverlappingRangeIPReservation{}
		err := c.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: cniconf.ReservationName("", a)}, o)
		switch {
		case apierrors.IsNotFound(err):
			t.Errorf("claim vm-st.st has %s in status.ips and no reservation holds it: the earlier claim's reservation, seen in the cache, was taken for its own", ip)
		case err != nil:
			t.Fatal(err)
		case !holdsFor(o, got):
			t.Errorf("claim vm-st.st has %s in status.ips, held by %s", ip, o.Spec.PodRef)
		}
	}
}
