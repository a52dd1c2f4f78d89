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
	"errors"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/nodeslice"
)

// Field indexes.
const (
	// claimNetworkIndex indexes claims by spec.network.
	claimNetworkIndex = "ipamclaim.spec.network"
	// claimWaitingIndex lists rackwire's claims still without addresses: a released
	// reservation wakes them.
	claimWaitingIndex = "ipamclaim.waiting"
	// vmNADIndex indexes VMs by the NADs ("<namespace>/<name>") their networks use.
	vmNADIndex = "ipamclaim.vm.nads"
	// vmClaimIndex indexes VMs by the claim names their persistent-looking networks map to:
	// a claim's deletion wakes every VM that wants its name (colliding names).
	vmClaimIndex = "ipamclaim.vm.claims"
)

// Options tune the area.
type Options struct {
	// Namespace holds the reservations: the manager's --nodeslice-namespace.
	Namespace      string
	ExhaustedRetry time.Duration
	StaleRetry     time.Duration
	UnplugRetry    time.Duration
	// ScanReuse: how long one read of a network's held addresses serves the picks of other
	// claims (a burst of VMs); 0 takes the default, negative reads afresh for every claim.
	ScanReuse time.Duration
	Workers   int
}

// Setup registers the IPAMClaim allocator and the VM claim controller with the production
// settings; reservations live where the CNI plugin and whereabouts keep theirs.
func Setup(mgr ctrl.Manager) error {
	return SetupWith(mgr, Options{Namespace: nodeslice.Namespace})
}

// SetupWith registers both reconcilers with options.
func SetupWith(mgr ctrl.Manager, o Options) error {
	if o.Namespace == "" {
		return errors.New("persistent IPs: no namespace for reservations")
	}
	if o.ExhaustedRetry == 0 {
		o.ExhaustedRetry = 30 * time.Second
	}
	if o.StaleRetry == 0 {
		o.StaleRetry = 30 * time.Second
	}
	if o.ScanReuse == 0 {
		o.ScanReuse = 250 * time.Millisecond
	}
	if o.UnplugRetry == 0 {
		o.UnplugRetry = 5 * time.Second
	}
	if o.Workers == 0 {
		// A reconcile is mostly apiserver round trips; claims of one network serialise only
		// on the in-memory pick.
		o.Workers = 64
	}
	if err := indexes(mgr); err != nil {
		return err
	}
	claims := &ClaimReconciler{
		Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("ipamclaim-controller"),
		Namespace: o.Namespace, ExhaustedRetry: o.ExhaustedRetry, ScanReuse: o.ScanReuse, picks: newPicks(),
	}
	claimMetrics.Use(mgr.GetCache())
	inNamespace := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetNamespace() == o.Namespace })
	// UsePriorityQueue off: controller-runtime v0.24.1's can deadlock on shutdown with several
	// workers (kubernetes-sigs/controller-runtime#3538).
	opts := controller.Options{MaxConcurrentReconciles: o.Workers, UsePriorityQueue: ptr.To(false)}
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("ipamclaim").
		For(&ipamclaimsv1alpha1.IPAMClaim{}).
		Watches(&nadv1.NetworkAttachmentDefinition{}, handler.EnqueueRequestsFromMapFunc(claims.claimsOfNAD)).
		Watches(&nodeslicev1alpha1.OverlappingRangeIPReservation{}, claims.releasedEvents(), builder.WithPredicates(inNamespace)).
		WithOptions(opts).
		Complete(claims); err != nil {
		return err
	}
	vms := &VMReconciler{
		Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("vm-ipamclaim-controller"),
		StaleRetry: o.StaleRetry, UnplugRetry: o.UnplugRetry,
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("vm-ipamclaims").
		For(&virtv1.VirtualMachine{}).
		Watches(&virtv1.VirtualMachineInstance{}, &handler.EnqueueRequestForObject{}).
		Watches(&ipamclaimsv1alpha1.IPAMClaim{}, handler.EnqueueRequestsFromMapFunc(vms.vmsOfClaim), builder.WithPredicates(claimMetaChanged)).
		Watches(&nadv1.NetworkAttachmentDefinition{}, handler.EnqueueRequestsFromMapFunc(vms.vmsOfNAD)).
		WithOptions(opts).
		Complete(vms)
}

// claimMetaChanged passes a claim's update to the VM controller only when what it reads
// changed: owner, labels, annotations, finalizers, deletion, spec. The VM controller never
// reads a claim's status, and every allocation writes one: in a burst, a third of its
// reconciles were for nothing.
var claimMetaChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	o, n := e.ObjectOld, e.ObjectNew
	return o.GetGeneration() != n.GetGeneration() || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
		!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences()) ||
		!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
		!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(o.GetFinalizers(), n.GetFinalizers())
}}

func indexes(mgr ctrl.Manager) error {
	ix := mgr.GetFieldIndexer()
	ctx := context.Background()
	if err := ix.IndexField(ctx, &nadv1.NetworkAttachmentDefinition{}, nadNetworkIndex, func(obj client.Object) []string {
		if name := persistentNetworkOf(obj); name != "" {
			return []string{name}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := ix.IndexField(ctx, &ipamclaimsv1alpha1.IPAMClaim{}, claimNetworkIndex, func(obj client.Object) []string {
		return []string{obj.(*ipamclaimsv1alpha1.IPAMClaim).Spec.Network}
	}); err != nil {
		return err
	}
	if err := ix.IndexField(ctx, &ipamclaimsv1alpha1.IPAMClaim{}, claimWaitingIndex, func(obj client.Object) []string {
		c := obj.(*ipamclaimsv1alpha1.IPAMClaim)
		if controllerutil.ContainsFinalizer(c, Finalizer) && len(c.Status.IPs) == 0 && c.DeletionTimestamp.IsZero() {
			return []string{"true"}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := ix.IndexField(ctx, &virtv1.VirtualMachine{}, vmClaimIndex, func(obj client.Object) []string {
		vm := obj.(*virtv1.VirtualMachine)
		if vm.Spec.Template == nil {
			return nil
		}
		var names []string
		for _, n := range vm.Spec.Template.Spec.Networks {
			if n.Multus != nil && !n.Multus.Default {
				names = append(names, ClaimName(vm.Name, n.Name))
			}
		}
		return names
	}); err != nil {
		return err
	}
	return ix.IndexField(ctx, &virtv1.VirtualMachine{}, vmNADIndex, func(obj client.Object) []string {
		vm := obj.(*virtv1.VirtualMachine)
		if vm.Spec.Template == nil {
			return nil
		}
		var keys []string
		for _, n := range vm.Spec.Template.Spec.Networks {
			if n.Multus != nil && !n.Multus.Default {
				keys = append(keys, nadKey(vm.Namespace, n.Multus.NetworkName).String())
			}
		}
		return keys
	})
}

// claimsOfNAD wakes the claims of the network a NAD serves (or served: a NAD that stops
// allowing persistent IPs leaves its claims' addresses held, and says so).
func (r *ClaimReconciler) claimsOfNAD(ctx context.Context, obj client.Object) []reconcile.Request {
	name := persistentNetworkOf(obj)
	if name == "" {
		return nil
	}
	var list ipamclaimsv1alpha1.IPAMClaimList
	if err := r.List(ctx, &list, client.MatchingFields{claimNetworkIndex: name}); err != nil {
		return nil
	}
	return requests(list.Items)
}

func requests(claims []ipamclaimsv1alpha1.IPAMClaim) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(claims))
	for i := range claims {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&claims[i])})
	}
	return out
}

// releasedEvents wakes the claims still waiting for an address when a reservation goes, and
// the claim the reservation held: deleted by hand while its VM runs, it is recreated at once
// rather than at the next resync, while any pod of the network could take the address.
func (r *ClaimReconciler) releasedEvents() handler.EventHandler {
	return handler.Funcs{
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			r.views.drop()
			if l := e.Object.GetLabels(); l[LabelClaim] != "" && l[LabelClaimNamespace] != "" {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: l[LabelClaimNamespace], Name: l[LabelClaim]}})
			}
			var list ipamclaimsv1alpha1.IPAMClaimList
			if err := r.List(ctx, &list, client.MatchingFields{claimWaitingIndex: "true"}); err != nil {
				return
			}
			for _, req := range requests(list.Items) {
				q.Add(req)
			}
		},
	}
}

// vmsOfClaim wakes the VM a claim is for (its kubevirt.io/vm label) and the other VMs whose
// claim name it is: when it goes, the second of two VMs with colliding names can have it.
func (r *VMReconciler) vmsOfClaim(ctx context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	if vm := obj.GetLabels()[VMLabel]; vm != "" {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: vm}})
	}
	var list virtv1.VirtualMachineList
	if err := r.List(ctx, &list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{vmClaimIndex: obj.GetName()}); err != nil {
		return out
	}
	for i := range list.Items {
		if list.Items[i].Name != obj.GetLabels()[VMLabel] {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// vmsOfNAD wakes the VMs that use a NAD: its creation, or allowPersistentIPs turned on.
func (r *VMReconciler) vmsOfNAD(ctx context.Context, obj client.Object) []reconcile.Request {
	var list virtv1.VirtualMachineList
	if err := r.List(ctx, &list, client.MatchingFields{vmNADIndex: client.ObjectKeyFromObject(obj).String()}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
