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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools/finalizers,verbs=update

// ConditionDuplicateAddress is true on a pool while one of its addresses is held by more
// than one IPAddress object (a Metal3 and a Cluster API one, which the apiserver cannot
// refuse since they are of different kinds); its Event has the same reason.
const ConditionDuplicateAddress = "DuplicateAddress"

// ConditionIndexesOmitted is true on a pool whose status.indexes grew past IndexesBudget
// and is no longer written; its Event has the same reason.
const ConditionIndexesOmitted = "IndexesOmitted"

// IndexesBudget is the most bytes of status.indexes a pool's status carries. etcd refuses
// requests past 1.5 MiB, and a pool status a sizeable part of that costs every write and
// every watcher in proportion (about 20,000 CAPM3-length claim names froze a pool's status).
const IndexesBudget = 512 << 10

// indexesSize is the size of the map in the JSON of the object.
func indexesSize(m map[string]string) int {
	n := 2
	for k, v := range m {
		n += len(k) + len(v) + 6 // quotes, colon, comma
	}
	return n
}

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
	// APIReader confirms, past the cache, that the claim of an orphaned address is gone.
	APIReader client.Reader
	Registry  *Registry
	Recorder  events.EventRecorder
	// Activity says when each pool's addresses last changed and its status was last written.
	Activity *poolActivity
	// CAPI: the Cluster API IPAM API is installed, so its IPAddresses count too.
	CAPI bool
}

// poolView is what the pool's IPAddresses of both kinds and its spec say about it.
type poolView struct {
	allocations       map[string]string
	addresses         int
	specErrs          field.ErrorList
	total, used, free int64
	// size and freeSize are total and free for people, exact where the int64s saturate.
	size, freeSize string
	// duplicates describes each address held by more than one IPAddress object.
	duplicates []string
	// orphans are IPAddresses whose claim is gone (or is another object of the same name).
	orphans []orphan
	// unlabelled are IPAddresses without the pool label, or with another pool's (written by
	// ip-address-manager, or by hand from another address's manifest), which a listing by
	// the label would miss.
	unlabelled []orphan
}

type orphan struct {
	obj  client.Object
	kind addressKind
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
		return ctrl.Result{}, poolFinalizers.remove(ctx, r.Client, pool)
	}
	if err := r.releaseOrphans(ctx, view.orphans); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.label(ctx, pool.Name, view.unlabelled); err != nil {
		return ctrl.Result{}, err
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
	// lastUpdated says when the allocations last changed, as ip-address-manager has it: a
	// spec edit that only moves observedGeneration or a condition leaves it.
	if pool.Status.LastUpdated == nil || !equality.Semantic.DeepEqual(before.Status.Indexes, pool.Status.Indexes) ||
		!equality.Semantic.DeepEqual(before.Status.Usage, pool.Status.Usage) {
		pool.Status.LastUpdated = &now
	}
	r.Activity.wrote(req.NamespacedName, now.Time)
	if c := meta.FindStatusCondition(pool.Status.Conditions, ipamv1alpha1.ConditionReady); c.Reason == ReasonPoolExhausted &&
		readyReason(before.Status.Conditions) != ReasonPoolExhausted {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, ReasonPoolExhausted, "Allocate", "%s", c.Message)
	}
	if c := meta.FindStatusCondition(pool.Status.Conditions, ConditionIndexesOmitted); c != nil &&
		meta.FindStatusCondition(before.Status.Conditions, ConditionIndexesOmitted) == nil {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, ConditionIndexesOmitted, "UpdateStatus", "%s", c.Message)
	}
	if c := meta.FindStatusCondition(pool.Status.Conditions, ConditionDuplicateAddress); c != nil &&
		!equality.Semantic.DeepEqual(c, meta.FindStatusCondition(before.Status.Conditions, ConditionDuplicateAddress)) {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, ConditionDuplicateAddress, "Allocate", "%s", c.Message)
	}
	return ctrl.Result{}, client.IgnoreNotFound(r.Status().Patch(ctx, pool, client.MergeFrom(before)))
}

// hasMetadata reports whether the pool carries its finalizer and, when it belongs to a
// cluster, the clusterctl move label.
func hasMetadata(pool *ipamv1alpha1.IPPool) bool {
	c := clusterOf(pool)
	return poolFinalizers.on(pool) && (c == "" || pool.Labels[ClusterNameLabel] == c)
}

// addMetadata adds the finalizer and the clusterctl move label with a patch of their own.
func (r *IPPoolReconciler) addMetadata(ctx context.Context, pool *ipamv1alpha1.IPPool) error {
	before := pool.DeepCopy()
	if !poolFinalizers.on(pool) {
		controllerutil.AddFinalizer(pool, PoolFinalizer)
	}
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
	v := poolView{allocations: map[string]string{}, size: "0", freeSize: "0"}
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
	holders := map[netip.Addr][]string{}
	for _, k := range r.kinds() {
		list := k.newList()
		if err := r.List(ctx, list, client.InNamespace(pool.Namespace), client.MatchingFields{IndexPool: pool.Name},
			client.UnsafeDisableDeepCopy); err != nil {
			return v, err
		}
		for _, o := range k.items(list) {
			v.addresses++
			a, claim, _, ok := k.holds(o)
			if !ok {
				continue
			}
			use(claim, a)
			if o.GetLabels()[PoolLabel] != pool.Name && len(pool.Name) <= 63 {
				v.unlabelled = append(v.unlabelled, orphan{o, k})
			}
			gone, err := r.claimGone(ctx, k, o, claim)
			if err != nil {
				return v, err
			}
			if gone {
				// Released below; it is no one's to delete by hand.
				v.orphans = append(v.orphans, orphan{o, k})
				continue
			}
			holders[a] = append(holders[a], describeAddress(k, o, claim))
		}
	}
	for a, hs := range holders {
		if len(hs) > 1 {
			slices.Sort(hs)
			v.duplicates = append(v.duplicates, fmt.Sprintf("%s is held by %s", a, strings.Join(hs, " and ")))
		}
	}
	slices.Sort(v.duplicates)
	if alloc != nil {
		c := alloc.Counts()
		// Each count saturates on its own (a /64 has more than 2^63), so used is not
		// total minus free.
		v.total, v.used, v.free = c.Total.Int64(), c.Used.Int64(), c.Free.Int64()
		v.size, v.freeSize = c.Total.Readable(), c.Free.Readable()
	}
	return v, nil
}

// setIPPoolStatus is the one place where an IPPool's status is written.
func setIPPoolStatus(pool *ipamv1alpha1.IPPool, v poolView) {
	size := indexesSize(v.allocations)
	switch {
	case size > IndexesBudget:
		pool.Status.Indexes = nil
		label := fmt.Sprintf("kubectl get ipaddresses.ipam.metal3.io,ipaddresses.ipam.cluster.x-k8s.io -n %s -l %s=%s", pool.Namespace, PoolLabel, pool.Name)
		if len(pool.Name) > 63 {
			label = "their spec.pool.name (spec.poolRef.name): the pool's name is too long for the " + PoolLabel + " label"
		}
		meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{
			Type: ConditionIndexesOmitted, Status: metav1.ConditionTrue, Reason: ConditionIndexesOmitted, ObservedGeneration: pool.Generation,
			Message: fmt.Sprintf("status.indexes is not written: its %d entries would take %d KiB, over the %d KiB that keep the pool's "+
				"status writes well under etcd's request limit; the counts and conditions stay current; list the addresses with %s",
				len(v.allocations), size/1024, IndexesBudget/1024, label),
		})
	case !maps.Equal(pool.Status.Indexes, v.allocations):
		pool.Status.Indexes = v.allocations
	}
	if size <= IndexesBudget {
		meta.RemoveStatusCondition(&pool.Status.Conditions, ConditionIndexesOmitted)
	}
	pool.Status.Usage = &ipamv1alpha1.IPPoolUsage{Total: v.total, Used: v.used, Free: v.free, Size: v.size, FreeSize: v.freeSize}
	pool.Status.ObservedGeneration = pool.Generation
	cond := metav1.Condition{
		Type: ipamv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonAvailable,
		Message: fmt.Sprintf("%s of %s addresses free", v.freeSize, v.size), ObservedGeneration: pool.Generation,
	}
	switch {
	case !pool.DeletionTimestamp.IsZero():
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonDeleting
		cond.Message = fmt.Sprintf("waiting for %d IPAddresses to be released", v.addresses)
	case len(v.specErrs) > 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonInvalidSpec, v.specErrs.ToAggregate().Error()
	case v.free == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonPoolExhausted
		cond.Message = fmt.Sprintf("all %s addresses are in use", v.size)
	}
	meta.SetStatusCondition(&pool.Status.Conditions, cond)
	if len(v.duplicates) == 0 {
		meta.RemoveStatusCondition(&pool.Status.Conditions, ConditionDuplicateAddress)
		return
	}
	meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{
		Type: ConditionDuplicateAddress, Status: metav1.ConditionTrue, Reason: ConditionDuplicateAddress,
		Message: strings.Join(v.duplicates, "; ") + ": another manager (a second ip-address-manager or rackwire) wrote to this pool; " +
			"delete the claim that should not have the address", ObservedGeneration: pool.Generation,
	})
}
