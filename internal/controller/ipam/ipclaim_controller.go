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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// RequestedAddressAnnotation on an IPClaim asks for one given address of the pool.
const RequestedAddressAnnotation = "ipAddress"

// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipclaims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipclaims/finalizers,verbs=update
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipaddresses,verbs=get;list;watch;create;update;patch;delete

// IPClaimReconciler gives every Metal3 IPClaim one address of its pool.
type IPClaimReconciler struct {
	client.Client
	// APIReader reads past the cache where a create just told that the cache is behind.
	APIReader client.Reader
	Registry  *Registry
	Recorder  events.EventRecorder
}

// Reconcile brings one IPClaim in line with its pool; see the package documentation.
func (r *IPClaimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &ipamv1alpha1.IPClaim{}
	if err := r.Get(ctx, req.NamespacedName, claim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	pool, err := getPool(ctx, r.Client, claim.Namespace, claim.Spec.Pool.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if p, err := paused(ctx, r.APIReader, claim.Namespace, clusterOf(pool), withPool(pool, claim)...); err != nil || p {
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
	return metal3Status.report(ctx, r.Client, r.Recorder, before, claim, out)
}

// setIPClaimStatus is the one place where an IPClaim's status is written.
func setIPClaimStatus(claim *ipamv1alpha1.IPClaim, out outcome) {
	cond := metav1.Condition{
		Type: ipamv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: out.reason,
		Message: out.message, ObservedGeneration: claim.Generation,
	}
	claim.Status.ErrorMessage = nil
	if out.address != "" {
		cond.Status, cond.Message = metav1.ConditionTrue, "address "+out.address+" allocated"
		claim.Status.Address = &corev1.ObjectReference{
			APIVersion: ipamv1alpha1.GroupVersion.String(), Kind: "IPAddress",
			Namespace: claim.Namespace, Name: out.address,
		}
	} else {
		claim.Status.ErrorMessage = &out.message
	}
	meta.SetStatusCondition(&claim.Status.Conditions, cond)
}

// bind finds or allocates the claim's address. An outcome without a reason means "try
// again soon, nothing to report".
func (r *IPClaimReconciler) bind(ctx context.Context, claim *ipamv1alpha1.IPClaim, pool *ipamv1alpha1.IPPool) (outcome, error) {
	if pool == nil {
		return outcome{reason: ReasonPoolNotReady, message: fmt.Sprintf("IPPool %s not found", claim.Spec.Pool.Name), retry: retryPool}, nil
	}
	if ip, err := r.existing(ctx, claim); err != nil || ip != nil {
		if ip == nil {
			return outcome{}, err
		}
		return bound(ip.Name), nil
	}
	var want netip.Addr
	if v, ok := claim.Annotations[RequestedAddressAnnotation]; ok {
		a, err := netip.ParseAddr(v)
		if err != nil {
			return outcome{reason: ReasonAllocationFailed, message: fmt.Sprintf("annotation %s: %q is not an IP address", RequestedAddressAnnotation, v)}, nil
		}
		want = a.Unmap()
	}

	var a netip.Addr
	var params ipalloc.Params
	var pickErr error
	if err := r.Registry.With(ctx, pool, func(s *poolState) error {
		a, pickErr = s.pick(kindMetal3, claim.Name, want)
		if pickErr != nil {
			s.wait(kindMetal3, client.ObjectKeyFromObject(claim))
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

	ip, err := newMetal3Address(r.Scheme(), pool, claim, a, params)
	if err != nil {
		return outcome{}, err
	}
	err = r.Create(ctx, ip)
	switch {
	case err == nil:
		return bound(ip.Name), nil
	case apierrors.IsAlreadyExists(err):
		return r.alreadyExists(ctx, claim, pool, ip, a)
	default:
		_ = r.Registry.With(ctx, pool, func(s *poolState) error {
			s.unpick(kindMetal3, claim.Name, a)
			return nil
		})
		return outcome{}, err
	}
}

// alreadyExists handles a create refused because the address's IPAddress exists: either
// ours from an earlier attempt the cache has not shown yet, or another claim's.
func (r *IPClaimReconciler) alreadyExists(ctx context.Context, claim *ipamv1alpha1.IPClaim, pool *ipamv1alpha1.IPPool,
	ip *ipamv1alpha1.IPAddress, a netip.Addr) (outcome, error) {
	got := &ipamv1alpha1.IPAddress{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(ip), got); err != nil {
		return outcome{}, client.IgnoreNotFound(err)
	}
	if got.Spec.Claim.Name == claim.Name && got.Spec.Pool.Name == pool.Name {
		return bound(got.Name), nil
	}
	// The apiserver knows an owner of this address that our allocator did not: mark it
	// used under its real owner and pick again.
	err := r.Registry.With(ctx, pool, func(s *poolState) error {
		if ga, key, ok := metal3Holder(got); ok {
			s.add(ga, key, got.UID)
		}
		s.unpick(kindMetal3, claim.Name, a)
		return nil
	})
	return outcome{retry: retryRace}, err
}

// existing returns the IPAddress already allocated to the claim, through the cache index:
// never a listing of the namespace.
func (r *IPClaimReconciler) existing(ctx context.Context, claim *ipamv1alpha1.IPClaim) (*ipamv1alpha1.IPAddress, error) {
	var list ipamv1alpha1.IPAddressList
	if err := r.List(ctx, &list, client.InNamespace(claim.Namespace), client.MatchingFields{IndexClaim: claim.Name}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Spec.Pool.Name == claim.Spec.Pool.Name {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// delete releases the claim's address, then lets the claim go.
func (r *IPClaimReconciler) delete(ctx context.Context, claim *ipamv1alpha1.IPClaim, pool *ipamv1alpha1.IPPool) error {
	if !controllerutil.ContainsFinalizer(claim, ClaimFinalizer) {
		return nil
	}
	ip, err := r.existing(ctx, claim)
	if err != nil {
		return err
	}
	if ip == nil && pool != nil {
		// The cache may not show an address created a moment ago; the allocator knows it.
		if ip, err = r.heldAddress(ctx, claim, pool); err != nil {
			return err
		}
	}
	if ip != nil {
		if err := release(ctx, r.Client, ip); err != nil {
			return err
		}
	}
	if pool != nil {
		_ = r.Registry.With(ctx, pool, func(s *poolState) error {
			if a, ok := s.held(holderKey(kindMetal3, claim.Name)); ok {
				s.unpick(kindMetal3, claim.Name, a)
			}
			return nil
		})
	}
	return removeFinalizer(ctx, r.Client, claim, ClaimFinalizer)
}

func (r *IPClaimReconciler) heldAddress(ctx context.Context, claim *ipamv1alpha1.IPClaim, pool *ipamv1alpha1.IPPool) (*ipamv1alpha1.IPAddress, error) {
	var a netip.Addr
	var ok bool
	if err := r.Registry.With(ctx, pool, func(s *poolState) error {
		a, ok = s.held(holderKey(kindMetal3, claim.Name))
		return nil
	}); err != nil || !ok {
		return nil, err
	}
	ip := &ipamv1alpha1.IPAddress{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: AddressName(pool.Spec.NamePrefix, a)}, ip)
	if apierrors.IsNotFound(err) || (err == nil && ip.Spec.Claim.Name != claim.Name) {
		return nil, nil
	}
	return ip, err
}

// newMetal3Address is the IPAddress of a for claim: owned by the claim (as its controller)
// and by the pool, and protected by a finalizer while the claim lives.
func newMetal3Address(scheme *runtime.Scheme, pool *ipamv1alpha1.IPPool, claim *ipamv1alpha1.IPClaim, a netip.Addr, p ipalloc.Params) (*ipamv1alpha1.IPAddress, error) {
	ip := &ipamv1alpha1.IPAddress{}
	ip.Name, ip.Namespace = AddressName(pool.Spec.NamePrefix, a), claim.Namespace
	ip.Finalizers = []string{AddressFinalizer}
	if c := clusterOf(pool); c != "" {
		ip.Labels = map[string]string{ClusterNameLabel: c}
	}
	ip.Spec = ipamv1alpha1.IPAddressSpec{
		Claim: corev1.ObjectReference{
			APIVersion: ipamv1alpha1.GroupVersion.String(), Kind: "IPClaim",
			Namespace: claim.Namespace, Name: claim.Name,
		},
		Pool: corev1.ObjectReference{
			APIVersion: ipamv1alpha1.GroupVersion.String(), Kind: "IPPool",
			Namespace: pool.Namespace, Name: pool.Name,
		},
		Address: ipamv1alpha1.IPAddressStr(a.String()),
		Prefix:  int32(p.Prefix),
	}
	if p.Gateway.IsValid() {
		g := ipamv1alpha1.IPAddressStr(p.Gateway.String())
		ip.Spec.Gateway = &g
	}
	for _, d := range p.DNSServers {
		ip.Spec.DNSServers = append(ip.Spec.DNSServers, ipamv1alpha1.IPAddressStr(d.String()))
	}
	return ip, owners(scheme, ip, pool, claim)
}

func readyReason(conds []metav1.Condition) string {
	if c := meta.FindStatusCondition(conds, ipamv1alpha1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}
