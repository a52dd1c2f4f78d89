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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	binder
	Recorder events.EventRecorder
	Gate     *ClusterGate
}

// NewIPClaimReconciler returns the reconciler of Metal3 IPClaims.
func NewIPClaimReconciler(c client.Client, apiReader client.Reader, reg *Registry, rec events.EventRecorder, gate *ClusterGate) *IPClaimReconciler {
	return &IPClaimReconciler{binder: binder{Client: c, APIReader: apiReader, Registry: reg, kind: metal3Kind}, Recorder: rec, Gate: gate}
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
	cluster, err := r.Gate.state(ctx, claim.Namespace, claimCluster("", claim, clusterOf(pool)), withPool(pool, claim)...)
	if err != nil || cluster == clusterPaused {
		return ctrl.Result{RequeueAfter: retryPaused}, err
	}
	if !claim.DeletionTimestamp.IsZero() {
		wait, err := r.release(ctx, claim, pool, claim.Spec.Pool.Name)
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
	return metal3Status.report(ctx, r.Client, r.Recorder, before, claim, out)
}

// setIPClaimStatus is the one place where an IPClaim's status is written.
func setIPClaimStatus(claim *ipamv1alpha1.IPClaim, out outcome) {
	cond := metav1.Condition{
		Type: ipamv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: out.reason,
		Message: out.message, ObservedGeneration: claim.Generation,
	}
	claim.Status.ErrorMessage = nil
	switch {
	case out.address != "":
		cond.Status, cond.Message = metav1.ConditionTrue, "address "+out.address+" allocated"
		claim.Status.Address = claimAddressRef(claim.Namespace, out.address)
	case !out.transient:
		claim.Status.ErrorMessage = &out.message
	}
	meta.SetStatusCondition(&claim.Status.Conditions, cond)
}

// bindClaim finds or allocates the claim's address.
func (r *IPClaimReconciler) bindClaim(ctx context.Context, claim *ipamv1alpha1.IPClaim, pool *ipamv1alpha1.IPPool, cluster clusterState) (outcome, error) {
	if pool == nil {
		return poolMissing(claim.Spec.Pool.Name), nil
	}
	want, out := requested(claim)
	if out.reason != "" {
		return out, nil
	}
	if cluster == clusterMissing {
		want = netip.Addr{}
	}
	published := ""
	if claim.Status.Address != nil {
		published = claim.Status.Address.Name
	}
	return r.bind(ctx, claim, pool, want, published, cluster != clusterMissing)
}

// requested is the address the claim's ipAddress annotation asks for, if any.
func requested(claim client.Object) (netip.Addr, outcome) {
	v, ok := claim.GetAnnotations()[RequestedAddressAnnotation]
	if !ok || v == "" {
		return netip.Addr{}, outcome{}
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Addr{}, outcome{reason: ReasonAllocationFailed, message: fmt.Sprintf("annotation %s: %q is not an IP address", RequestedAddressAnnotation, v)}
	}
	return a.Unmap(), outcome{}
}

// newMetal3Address is the IPAddress of a for claim: owned by the claim (as its controller)
// and by the pool, and protected by a finalizer while the claim lives.
func newMetal3Address(scheme *runtime.Scheme, pool *ipamv1alpha1.IPPool, claim *ipamv1alpha1.IPClaim, a netip.Addr, p ipalloc.Params) (*ipamv1alpha1.IPAddress, error) {
	ip := &ipamv1alpha1.IPAddress{}
	ip.Name, ip.Namespace = AddressName(pool.Spec.NamePrefix, a), claim.Namespace
	ip.Finalizers = []string{AddressFinalizer}
	ip.Labels = addressLabels(pool, claim)
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
