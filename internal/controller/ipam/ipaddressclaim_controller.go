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
	"net/netip"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims/finalizers,verbs=update
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddresses,verbs=get;list;watch;create;update;patch;delete

// IPAddressClaimReconciler serves Cluster API IPAddressClaims whose poolRef names one of our
// IPPools, from the same allocators as the Metal3 claims.
type IPAddressClaimReconciler struct {
	binder
	Recorder events.EventRecorder
	Gate     *ClusterGate
}

// NewIPAddressClaimReconciler returns the reconciler of Cluster API IPAddressClaims.
func NewIPAddressClaimReconciler(c client.Client, apiReader client.Reader, reg *Registry, rec events.EventRecorder, gate *ClusterGate) *IPAddressClaimReconciler {
	return &IPAddressClaimReconciler{binder: binder{Client: c, APIReader: apiReader, Registry: reg, kind: capiKind}, Recorder: rec, Gate: gate}
}

// readyTrue is the reason of a true Ready condition in Cluster API v1beta2 conditions.
const readyTrue = "Ready"

// Reconcile brings one IPAddressClaim in line with its pool; see the package documentation.
func (r *IPAddressClaimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &capiipamv1beta2.IPAddressClaim{}
	if err := r.Get(ctx, req.NamespacedName, claim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ours(claim.Spec.PoolRef) {
		// Another IPAM provider owns it.
		return ctrl.Result{}, nil
	}
	pool, err := getPool(ctx, r.Client, claim.Namespace, claim.Spec.PoolRef.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	cluster, err := r.Gate.state(ctx, claim.Namespace, claimCluster(claim.Spec.ClusterName, claim, clusterOf(pool)), withPool(pool, claim)...)
	if err != nil || cluster == clusterPaused {
		return ctrl.Result{RequeueAfter: retryPaused}, err
	}
	if !claim.DeletionTimestamp.IsZero() {
		wait, err := r.release(ctx, claim, pool, claim.Spec.PoolRef.Name)
		return ctrl.Result{RequeueAfter: wait}, err
	}
	if !r.kind.claimFin.on(claim) {
		return ctrl.Result{}, client.IgnoreNotFound(r.kind.claimFin.add(ctx, r.Client, claim))
	}

	before := claim.DeepCopy()
	out, err := r.bindClaim(ctx, claim, pool, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	return capiStatus.report(ctx, r.Client, r.Recorder, before, claim, out)
}

// setIPAddressClaimStatus is the one place where an IPAddressClaim's status is written.
func setIPAddressClaimStatus(claim *capiipamv1beta2.IPAddressClaim, out outcome) {
	cond := metav1.Condition{
		Type: capiipamv1beta2.IPAddressClaimReadyCondition, Status: metav1.ConditionFalse,
		Reason: out.reason, Message: out.message, ObservedGeneration: claim.Generation,
	}
	if out.address != "" {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, readyTrue, ""
		claim.Status.AddressRef = capiipamv1beta2.IPAddressReference{Name: out.address}
	}
	meta.SetStatusCondition(&claim.Status.Conditions, cond)
}

func (r *IPAddressClaimReconciler) bindClaim(ctx context.Context, claim *capiipamv1beta2.IPAddressClaim, pool *ipamv1alpha1.IPPool, cluster clusterState) (outcome, error) {
	if pool == nil {
		return poolMissing(claim.Spec.PoolRef.Name), nil
	}
	want, out := requested(claim)
	if out.reason != "" {
		return out, nil
	}
	return r.bind(ctx, claim, pool, want, claim.Status.AddressRef.Name, cluster != clusterMissing)
}

// newCAPIAddress is the contract's IPAddress for claim: named after its address as
// ip-address-manager names it (so that the apiserver refuses a second one), owned by the
// claim (as its controller) and by the pool, and protected by a finalizer.
func newCAPIAddress(scheme *runtime.Scheme, pool *ipamv1alpha1.IPPool,
	claim *capiipamv1beta2.IPAddressClaim, a netip.Addr, p ipalloc.Params) (*capiipamv1beta2.IPAddress, error) {
	ip := &capiipamv1beta2.IPAddress{}
	ip.Name, ip.Namespace = AddressName(pool.Spec.NamePrefix, a), claim.Namespace
	ip.Finalizers = []string{CAPIAddressFinalizer}
	ip.Labels = addressLabels(pool, claim)
	prefix := int32(p.Prefix)
	ip.Spec = capiipamv1beta2.IPAddressSpec{
		ClaimRef: capiipamv1beta2.IPAddressClaimReference{Name: claim.Name},
		PoolRef:  claim.Spec.PoolRef,
		Address:  a.String(),
		Prefix:   &prefix,
	}
	if p.Gateway.IsValid() {
		ip.Spec.Gateway = p.Gateway.String()
	}
	return ip, owners(scheme, ip, pool, claim)
}
