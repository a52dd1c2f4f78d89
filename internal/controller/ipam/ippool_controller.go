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
	"fmt"
	"maps"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools/finalizers,verbs=update

// Reasons of an IPPool's Ready condition.
const (
	ReasonAvailable   = "Available"
	ReasonInvalidSpec = "InvalidSpec"
	ReasonDeleting    = "Deleting"
)

// IPPoolReconciler keeps an IPPool's status (a cache of its IPAddresses and
// pre-allocations), its clusterctl move label, and its deletion until it is unused.
type IPPoolReconciler struct {
	client.Client
	Registry *Registry
	Recorder events.EventRecorder
	// Activity says when each pool's addresses last changed and its status was last written.
	Activity *poolActivity
}

// poolView is what the pool's IPAddresses of both kinds and its spec say about it.
type poolView struct {
	allocations       map[string]string
	addresses         int
	specErrs          field.ErrorList
	total, used, free int64
}

// Reconcile refreshes one IPPool's status, labels and finalizer.
func (r *IPPoolReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// The cache's own object, read only until copied below: during a burst of claims the
	// pool is reconciled every PoolStatusInterval only to find that its status must wait,
	// and a copy each time cost a copy of its allocations.
	cached := &ipamv1alpha1.IPPool{}
	if err := r.Get(ctx, req.NamespacedName, cached, client.UnsafeDisableDeepCopy); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.Registry.Forget(req.NamespacedName)
			r.Activity.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cached.DeletionTimestamp.IsZero() {
		if !hasMetadata(cached) {
			return ctrl.Result{}, r.addMetadata(ctx, cached.DeepCopy())
		}
		written, changed := r.Activity.times(req.NamespacedName)
		if wait := statusWait(cached, written, changed, time.Now()); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	pool := cached.DeepCopy()
	view, err := r.view(ctx, pool)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !pool.DeletionTimestamp.IsZero() && view.addresses == 0 {
		r.Registry.Forget(req.NamespacedName)
		return ctrl.Result{}, removeFinalizer(ctx, r.Client, pool, PoolFinalizer)
	}
	if pool.DeletionTimestamp.IsZero() {
		// A spec change rebuilds the allocator, which wakes the claims waiting for room.
		if err := r.Registry.With(ctx, pool, func(*poolState) error { return nil }); err != nil {
			return ctrl.Result{}, err
		}
	}

	before := pool.DeepCopy()
	setIPPoolStatus(pool, view)
	if equality.Semantic.DeepEqual(before.Status, pool.Status) {
		return ctrl.Result{}, nil
	}
	now := metav1.Now()
	pool.Status.LastUpdated = &now
	r.Activity.wrote(req.NamespacedName, now.Time)
	if c := meta.FindStatusCondition(pool.Status.Conditions, ipamv1alpha1.ConditionReady); c.Reason == ReasonPoolExhausted &&
		readyReason(before.Status.Conditions) != ReasonPoolExhausted {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, ReasonPoolExhausted, "Allocate", "%s", c.Message)
	}
	return ctrl.Result{}, client.IgnoreNotFound(r.Status().Patch(ctx, pool, client.MergeFrom(before)))
}

// hasMetadata reports whether the pool carries its finalizer and, when it belongs to a
// cluster, the clusterctl move label.
func hasMetadata(pool *ipamv1alpha1.IPPool) bool {
	c := clusterOf(pool)
	return controllerutil.ContainsFinalizer(pool, PoolFinalizer) && (c == "" || pool.Labels[ClusterNameLabel] == c)
}

// addMetadata adds the finalizer and the clusterctl move label with a patch of their own.
func (r *IPPoolReconciler) addMetadata(ctx context.Context, pool *ipamv1alpha1.IPPool) error {
	before := pool.DeepCopy()
	controllerutil.AddFinalizer(pool, PoolFinalizer)
	if c := clusterOf(pool); c != "" {
		if pool.Labels == nil {
			pool.Labels = map[string]string{}
		}
		pool.Labels[ClusterNameLabel] = c
	}
	return r.Patch(ctx, pool, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// view rebuilds the pool's usage from the cache: its IPAddresses, through the pool index,
// and its pre-allocations. It does not read the registry, whose reservations may run ahead
// of the objects; the status only ever says what the objects say. The listings are the
// cache's own objects (read only): copying every address of a filling pool each time was
// the pool controller's largest cost.
func (r *IPPoolReconciler) view(ctx context.Context, pool *ipamv1alpha1.IPPool) (poolView, error) {
	v := poolView{allocations: map[string]string{}}
	alloc, errs := BuildPool(&pool.Spec)
	pre, perrs := PreAllocations(&pool.Spec, alloc)
	v.specErrs = append(v.specErrs, errs...)
	v.specErrs = append(v.specErrs, perrs...)
	use := func(claim string, a netip.Addr) {
		v.allocations[claim] = a.String()
		if alloc != nil && alloc.Contains(a) && !alloc.InUse(a) {
			_ = alloc.Reserve(a)
		}
	}
	for claim, a := range pre {
		use(claim, a)
	}
	var m3 ipamv1alpha1.IPAddressList
	if err := r.List(ctx, &m3, client.InNamespace(pool.Namespace), client.MatchingFields{IndexPool: pool.Name},
		client.UnsafeDisableDeepCopy); err != nil {
		return v, err
	}
	for i := range m3.Items {
		if a, _, ok := metal3Holder(&m3.Items[i]); ok {
			use(m3.Items[i].Spec.Claim.Name, a)
		}
	}
	var capi capiipamv1beta2.IPAddressList
	if err := r.List(ctx, &capi, client.InNamespace(pool.Namespace), client.MatchingFields{IndexPool: pool.Name},
		client.UnsafeDisableDeepCopy); err != nil {
		return v, err
	}
	for i := range capi.Items {
		if a, _, ok := capiHolder(&capi.Items[i]); ok {
			use(capi.Items[i].Spec.ClaimRef.Name, a)
		}
	}
	v.addresses = len(m3.Items) + len(capi.Items)
	if alloc != nil {
		c := alloc.Counts()
		// Each count saturates on its own (a /64 has more than 2^63), so used is not
		// total minus free.
		v.total, v.used, v.free = c.Total.Int64(), c.Used.Int64(), c.Free.Int64()
	}
	return v, nil
}

// setIPPoolStatus is the one place where an IPPool's status is written.
func setIPPoolStatus(pool *ipamv1alpha1.IPPool, v poolView) {
	if !maps.Equal(pool.Status.Allocations, v.allocations) {
		pool.Status.Allocations = v.allocations
	}
	pool.Status.Usage = &ipamv1alpha1.IPPoolUsage{Total: v.total, Used: v.used, Free: v.free}
	pool.Status.ObservedGeneration = pool.Generation
	cond := metav1.Condition{
		Type: ipamv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonAvailable,
		Message: fmt.Sprintf("%d of %d addresses free", v.free, v.total), ObservedGeneration: pool.Generation,
	}
	switch {
	case !pool.DeletionTimestamp.IsZero():
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonDeleting
		cond.Message = fmt.Sprintf("waiting for %d IPAddresses to be released", v.addresses)
	case len(v.specErrs) > 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonInvalidSpec, v.specErrs.ToAggregate().Error()
	case v.free == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonPoolExhausted
		cond.Message = fmt.Sprintf("all %d addresses are in use", v.total)
	}
	meta.SetStatusCondition(&pool.Status.Conditions, cond)
}
