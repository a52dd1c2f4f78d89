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

package ipreconciler

import (
	"context"
	"errors"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler/holder"
	"github.com/rackwire/rackwire/internal/controller/nodeslice"
)

// Production settings, set from the manager's flags.
var (
	// Grace is how long a holder must have been seen gone before its records are reaped: a
	// pod's DEL, a Node's drain and the caches of the manager all get that long first.
	Grace = 5 * time.Minute
	// Resync is how often a scope is looked at without an event (an ADD cut short leaves
	// no event behind).
	Resync = time.Minute
	// TrustNetworkStatus: see Reconciler.TrustNetworkStatus. Off unless the infra team
	// vouches that only Multus writes pods' network-status (config/cni/network-status-policy).
	TrustNetworkStatus = false
)

// Skew is the clock difference tolerated between the apiservers that stamped a pod and a
// reservation (see holder.Judge).
const Skew = 2 * time.Second

// scopeIndex indexes the NADs of rackwire networks by reservation scope.
const scopeIndex = "ipreconciler.scope"

// Options tune the reconciler.
type Options struct {
	// Namespace holds whereabouts' IPPools and reservations (--nodeslice-namespace).
	Namespace string
	Grace     time.Duration
	Resync    time.Duration
	Skew      time.Duration
	// TrustNetworkStatus: see Reconciler.TrustNetworkStatus.
	TrustNetworkStatus bool
}

// Setup registers the reconciler with the production settings.
func Setup(mgr ctrl.Manager) error {
	return SetupWith(mgr, Options{Namespace: nodeslice.Namespace, Grace: Grace, Resync: Resync, Skew: Skew, TrustNetworkStatus: TrustNetworkStatus})
}

// +kubebuilder:rbac:groups=whereabouts.cni.cncf.io,resources=ippools,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=whereabouts.cni.cncf.io,resources=overlappingrangeipreservations,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=network-attachment-definitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=whereabouts.cni.cncf.io,resources=nodeslicepools,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=ipamclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// SetupWith registers the reconciler with options. The manager's cache must trim Pods
// with TrimPod (CacheOptions).
func SetupWith(mgr ctrl.Manager, o Options) error {
	if o.Namespace == "" {
		return errors.New("ip reconciler: no namespace for whereabouts' objects")
	}
	if o.Grace <= 0 || o.Resync <= 0 {
		return errors.New("ip reconciler: the grace period and the resync period must be positive")
	}
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &nadv1.NetworkAttachmentDefinition{}, scopeIndex, func(obj client.Object) []string {
		if s, ok := scopeOfNAD(obj); ok {
			return []string{indexKey(s)}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &nadv1.NetworkAttachmentDefinition{}, whereaboutsIndex, whereaboutsSlices); err != nil {
		return err
	}
	// Read in every reconcile, woken by nothing: an allocation coming or going needs no
	// reaping and no restoring until its reservation or holder goes.
	for _, obj := range []client.Object{&nodeslicev1alpha1.IPPool{}, &ipamclaimsv1alpha1.IPAMClaim{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return err
		}
	}
	r := &Reconciler{
		Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("ipreconciler"),
		Namespace: o.Namespace, Grace: o.Grace, Resync: o.Resync, Skew: o.Skew, TrustNetworkStatus: o.TrustNetworkStatus,
		scopes: newScopes(), deleted: map[string]holder.Evidence{},
	}
	inNamespace := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetNamespace() == o.Namespace })
	return ctrl.NewControllerManagedBy(mgr).
		Named("ipreconciler").
		Watches(&nadv1.NetworkAttachmentDefinition{}, r.nadEvents()).
		Watches(&nodeslicev1alpha1.OverlappingRangeIPReservation{}, r.reservationEvents(), builder.WithPredicates(inNamespace)).
		Watches(&corev1.Pod{}, r.everyScopeOnDelete()).
		WatchesMetadata(&corev1.Node{}, r.everyScopeOnDelete()).
		// One worker: scopes are few, and a reconcile is a read of the cache and a few writes.
		WithOptions(controller.Options{MaxConcurrentReconciles: 1, UsePriorityQueue: ptr.To(false)}).
		Complete(r)
}

// CacheOptions trims the Pods the manager caches to what the reconciler reads: a cluster's
// pods are its most numerous objects, and their specs and statuses are large.
func CacheOptions(o *cache.Options) {
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	o.ByObject[&corev1.Pod{}] = cache.ByObject{Transform: TrimPod}
}

// TrimPod keeps of a Pod its identity, Node, phase and network status (which sandbox holds
// its interfaces); other objects pass unchanged.
func TrimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	var annotations map[string]string
	if s, ok := p.Annotations[holder.AnnotationNetworkStatus]; ok {
		annotations = map[string]string{holder.AnnotationNetworkStatus: s}
	}
	return &corev1.Pod{
		TypeMeta: p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp, Annotations: annotations,
		},
		Spec:   corev1.PodSpec{NodeName: p.Spec.NodeName},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}, nil
}
