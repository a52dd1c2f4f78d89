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

package ipam

import (
	"context"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// ClaimWorkers is how many claims of each kind are reconciled at once. Claims of one pool
// only serialise on the in-memory pick, so the rest of a reconcile (apiserver round trips)
// overlaps.
var ClaimWorkers = 16

// PoolStatusInterval is how long the addresses of a pool must stay unchanged before the
// IPPool controller rebuilds and writes the pool's status, and the least time between two
// writes: a burst of claims costs a pool a status write when it is over, not one per
// address (the status is a cache; see DESIGN.md 4). A burst that goes on is written
// every StatusSpacing.
var PoolStatusInterval = time.Second

// The events.k8s.io recorder of the reconcilers.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// The controllers use the classic workqueue: controller-runtime v0.24.1's priority queue can
// deadlock on shutdown with several workers (kubernetes-sigs/controller-runtime#3538, fixed
// after v0.24.1), which leaves a stopping manager hanging past its grace period.

// Setup registers the IPPool, IPClaim and IPAddressClaim reconcilers and the allocator
// registry they share. Without the Cluster API IPAM CRDs in the cluster the Cluster API
// half stays off: Metal3 claims are served, and the log and the metric
// rackwire_ipam_capi_enabled say so.
func Setup(mgr ctrl.Manager) error {
	ctx := context.Background()
	capi := CAPIInstalled(mgr.GetRESTMapper())
	capiEnabled.Set(0)
	if capi {
		capiEnabled.Set(1)
	} else {
		ctrl.Log.WithName("ipam").Info("the Cluster API IPAM API (ipam.cluster.x-k8s.io/v1beta2) is not installed: " +
			"serving Metal3 IPClaims only; restart the manager after installing it")
	}
	if err := RegisterIndexes(ctx, mgr.GetFieldIndexer(), capi); err != nil {
		return err
	}
	reg := NewRegistry(mgr.GetAPIReader(), capi)
	activity := &poolActivity{}
	poolMetrics.use(reg, mgr.GetCache(), capi)
	if err := reg.Watch(ctx, mgr.GetCache()); err != nil {
		return err
	}
	gate := &ClusterGate{Cache: mgr.GetCache(), Live: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper()}

	pools := ctrl.NewControllerManagedBy(mgr).
		Named("ippool").
		Watches(&ipamv1alpha1.IPPool{}, poolEvents()).
		Watches(&ipamv1alpha1.IPAddress{}, coalescedPoolOfAddress(activity))
	if capi {
		pools = pools.Watches(&capiipamv1beta2.IPAddress{}, coalescedPoolOfAddress(activity))
	}
	if err := pools.
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, UsePriorityQueue: ptr.To(false)}).
		Complete(&IPPoolReconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Registry: reg,
			Recorder: mgr.GetEventRecorder("ippool-controller"), Activity: activity, CAPI: capi,
		}); err != nil {
		return err
	}

	if err := ctrl.NewControllerManagedBy(mgr).
		For(&ipamv1alpha1.IPClaim{}).
		Watches(&ipamv1alpha1.IPAddress{}, claimOfAddress()).
		WatchesRawSource(reg.wakeups(kindMetal3)).
		WithOptions(controller.Options{MaxConcurrentReconciles: ClaimWorkers, UsePriorityQueue: ptr.To(false)}).
		Complete(NewIPClaimReconciler(mgr.GetClient(), mgr.GetAPIReader(), reg, mgr.GetEventRecorder("ipclaim-controller"), gate)); err != nil {
		return err
	}
	if !capi {
		return nil
	}

	return ctrl.NewControllerManagedBy(mgr).
		For(&capiipamv1beta2.IPAddressClaim{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return ours(o.(*capiipamv1beta2.IPAddressClaim).Spec.PoolRef)
		}))).
		Watches(&capiipamv1beta2.IPAddress{}, claimOfAddress()).
		WatchesRawSource(reg.wakeups(kindCAPI)).
		WithOptions(controller.Options{MaxConcurrentReconciles: ClaimWorkers, UsePriorityQueue: ptr.To(false)}).
		Complete(NewIPAddressClaimReconciler(mgr.GetClient(), mgr.GetAPIReader(), reg, mgr.GetEventRecorder("ipaddressclaim-controller"), gate))
}

// coalescedPoolOfAddress records that the pool of an IPAddress changed and enqueues it
// after PoolStatusInterval. The delaying queue keeps one entry per pool, so every event
// until then joins that one reconcile.
func coalescedPoolOfAddress(activity *poolActivity) handler.EventHandler {
	add := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range poolOfAddress(ctx, o) {
			activity.changed(req.NamespacedName, time.Now())
			q.AddAfter(req, PoolStatusInterval)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.ObjectOld, q)
			add(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, e.Object, q)
		},
	}
}

// poolEvents enqueues an IPPool at once when it is created, deleted or changed, except for
// a change to its status alone, which waits PoolStatusInterval as IPAddress events do. The
// pool controller writes that status itself: reacting to its own write at once rebuilt and
// wrote the status again whenever an address had come meanwhile, so a burst of claims
// rewrote the pool (an object the size of its allocations) several times a second whatever
// PoolStatusInterval said (test/bench). A status changed by someone else (wiped, or restored
// by a move) is still rebuilt, one interval later.
func poolEvents() handler.EventHandler {
	req := func(o client.Object) reconcile.Request {
		return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(req(e.Object))
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if statusOnly(e.ObjectOld, e.ObjectNew) {
				q.AddAfter(req(e.ObjectNew), PoolStatusInterval)
				return
			}
			q.Add(req(e.ObjectNew))
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(req(e.Object))
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(req(e.Object))
		},
	}
}

// statusOnly reports whether an update left everything the pool controller acts on (spec,
// deletion, finalizers, labels, annotations) as it was.
func statusOnly(o, n client.Object) bool {
	return o.GetGeneration() == n.GetGeneration() &&
		o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) &&
		slices.Equal(o.GetFinalizers(), n.GetFinalizers()) &&
		maps.Equal(o.GetLabels(), n.GetLabels()) &&
		maps.Equal(o.GetAnnotations(), n.GetAnnotations())
}

// claimOfAddress maps an IPAddress of either kind to the claim it names. Not Owns: the
// IPAddresses ip-address-manager wrote have no controller reference, and a claim must hear
// that its address was deleted by hand to create it again.
func claimOfAddress() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		var claim string
		switch ip := o.(type) {
		case *ipamv1alpha1.IPAddress:
			claim = ip.Spec.Claim.Name
		case *capiipamv1beta2.IPAddress:
			if ours(ip.Spec.PoolRef) {
				claim = ip.Spec.ClaimRef.Name
			}
		}
		if claim == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: claim}}}
	})
}

// poolOfAddress maps an IPAddress of either kind to its IPPool.
func poolOfAddress(_ context.Context, o client.Object) []reconcile.Request {
	h, ok := holdingOf(o)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: h.pool}}
}
