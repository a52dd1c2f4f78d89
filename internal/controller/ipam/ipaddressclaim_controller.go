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
	"net/netip"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

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
	client.Client
	APIReader client.Reader
	Registry  *Registry
	Recorder  events.EventRecorder
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
	cluster := claim.Spec.ClusterName
	if cluster == "" {
		cluster = clusterOf(pool)
	}
	if p, err := paused(ctx, r.APIReader, claim.Namespace, cluster, withPool(pool, claim)...); err != nil || p {
		return ctrl.Result{RequeueAfter: retryPaused}, err
	}
	if !claim.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.delete(ctx, claim, pool)
	}
	if !controllerutil.ContainsFinalizer(claim, ClaimFinalizer) {
		return ctrl.Result{}, client.IgnoreNotFound(addFinalizer(ctx, r.Client, claim, ClaimFinalizer))
	}

	before := claim.DeepCopy()
	out, err := r.bind(ctx, claim, pool)
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

func (r *IPAddressClaimReconciler) bind(ctx context.Context, claim *capiipamv1beta2.IPAddressClaim, pool *ipamv1alpha1.IPPool) (outcome, error) {
	if pool == nil {
		return outcome{reason: ReasonPoolNotReady, message: fmt.Sprintf("IPPool %s not found", claim.Spec.PoolRef.Name), retry: retryPool}, nil
	}
	ip := &capiipamv1beta2.IPAddress{}
	err := r.Get(ctx, client.ObjectKeyFromObject(claim), ip)
	switch {
	case err == nil && !ip.DeletionTimestamp.IsZero():
		return r.recreate(ctx, claim, pool, ip)
	case err == nil:
		if ip.Spec.ClaimRef.Name != claim.Name || !ours(ip.Spec.PoolRef) {
			return outcome{reason: ReasonAllocationFailed, message: "IPAddress " + ip.Name + " exists and belongs to another claim or provider", retry: retryExhausted}, nil
		}
		return bound(ip.Name), nil
	case !apierrors.IsNotFound(err):
		return outcome{}, err
	}

	var a netip.Addr
	var params ipalloc.Params
	var pickErr error
	if err := r.Registry.With(ctx, pool, func(s *poolState) error {
		a, pickErr = s.pick(kindCAPI, claim.Name, netip.Addr{})
		if pickErr != nil {
			s.wait(kindCAPI, client.ObjectKeyFromObject(claim))
			return nil
		}
		params = s.params(a)
		return nil
	}); err != nil {
		return outcome{}, err
	}
	if pickErr != nil {
		return pickFailure(pickErr), nil
	}

	ip, err = newCAPIAddress(r.Scheme(), pool, claim, a, params)
	if err != nil {
		return outcome{}, err
	}
	err = r.Create(ctx, ip)
	switch {
	case err == nil:
		return bound(ip.Name), nil
	case apierrors.IsAlreadyExists(err):
		// Ours from an earlier attempt that the cache does not show yet, or the old object
		// still going away before a re-create: look again shortly. The reservation stays,
		// since it is the claim's address either way.
		return outcome{retry: retryRace}, nil
	default:
		_ = r.Registry.With(ctx, pool, func(s *poolState) error {
			s.unpick(kindCAPI, claim.Name, a)
			return nil
		})
		return outcome{}, err
	}
}

// recreate lets an IPAddress deleted while its claim lives go, keeping its address for the
// claim, so that the next reconcile creates it again with the same values (the contract's
// first option).
func (r *IPAddressClaimReconciler) recreate(ctx context.Context, claim *capiipamv1beta2.IPAddressClaim, pool *ipamv1alpha1.IPPool,
	ip *capiipamv1beta2.IPAddress) (outcome, error) {
	if a, _, ok := capiHolder(ip); ok {
		if err := r.Registry.With(ctx, pool, func(s *poolState) error {
			s.keep(kindCAPI, claim.Name, a)
			return nil
		}); err != nil {
			return outcome{}, err
		}
	}
	if err := removeFinalizer(ctx, r.Client, ip, AddressFinalizer); err != nil {
		return outcome{}, err
	}
	return outcome{retry: retryRace}, nil
}

func (r *IPAddressClaimReconciler) delete(ctx context.Context, claim *capiipamv1beta2.IPAddressClaim, pool *ipamv1alpha1.IPPool) error {
	if !controllerutil.ContainsFinalizer(claim, ClaimFinalizer) {
		return nil
	}
	// A live read: the cache may not show an address created a moment ago.
	ip := &capiipamv1beta2.IPAddress{}
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(claim), ip)
	switch {
	case err == nil && ip.Spec.ClaimRef.Name == claim.Name:
		if err := release(ctx, r.Client, ip); err != nil {
			return err
		}
	case err != nil && !apierrors.IsNotFound(err):
		return err
	}
	if pool != nil {
		_ = r.Registry.With(ctx, pool, func(s *poolState) error {
			if a, ok := s.held(holderKey(kindCAPI, claim.Name)); ok {
				s.unpick(kindCAPI, claim.Name, a)
			}
			return nil
		})
	}
	return removeFinalizer(ctx, r.Client, claim, ClaimFinalizer)
}

// newCAPIAddress is the contract's IPAddress for claim: named after it, owned by it (as
// its controller) and by the pool, and protected by a finalizer.
func newCAPIAddress(scheme *runtime.Scheme, pool *ipamv1alpha1.IPPool,
	claim *capiipamv1beta2.IPAddressClaim, a netip.Addr, p ipalloc.Params) (*capiipamv1beta2.IPAddress, error) {
	ip := &capiipamv1beta2.IPAddress{}
	ip.Name, ip.Namespace = claim.Name, claim.Namespace
	ip.Finalizers = []string{AddressFinalizer}
	if c := clusterOf(pool); c != "" {
		ip.Labels = map[string]string{ClusterNameLabel: c}
	}
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
