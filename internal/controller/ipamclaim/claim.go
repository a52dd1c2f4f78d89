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
	"fmt"
	"net/netip"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
)

// ClaimReconciler allocates the addresses of IPAMClaims of rackwire's persistent networks.
type ClaimReconciler struct {
	client.Client
	// Live reads past the cache where a stale read would be wrong: who holds a reservation
	// that answered AlreadyExists, and which reservations a released claim has.
	Live     client.Reader
	Recorder events.EventRecorder
	// Namespace holds the reservations and whereabouts' IPPools (--nodeslice-namespace).
	Namespace string
	// ExhaustedRetry is how long an exhausted claim waits before it looks again, beyond
	// the wake-up that a released reservation gives it.
	ExhaustedRetry time.Duration
	// ScanReuse is how long a read of a network's held addresses serves other claims' picks.
	ScanReuse time.Duration

	picks *picks
	views views
}

// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=ipamclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=ipamclaims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=whereabouts.cni.cncf.io,resources=overlappingrangeipreservations,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=whereabouts.cni.cncf.io,resources=ippools,verbs=get;list;watch
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=network-attachment-definitions,verbs=get;list;watch

// Reconcile allocates a claim's addresses once, keeps them held, and releases them when the
// claim goes.
func (r *ClaimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &ipamclaimsv1alpha1.IPAMClaim{}
	if err := r.Get(ctx, req.NamespacedName, claim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !claim.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finish(ctx, claim)
	}
	net, err := r.network(ctx, claim)
	if err != nil {
		return ctrl.Result{}, err
	}
	ours := controllerutil.ContainsFinalizer(claim, Finalizer)
	if _, recorded := recordedNAD(claim); !recorded && !ours {
		if ref := metav1.GetControllerOf(claim); ref != nil && kubevirtOwner(ref) {
			// A VM's claim that rackwire's VM controller did not make: ipam-extensions' for
			// another plugin's network of the same name (OVN-Kubernetes'). rackwire's own claims
			// of earlier releases get their NAD recorded by the VM controller, then are served.
			return ctrl.Result{}, nil
		}
	}
	if !net.ok && !ours {
		return ctrl.Result{}, nil // another network's claim: not ours to touch
	}
	if len(claim.Status.IPs) == 0 {
		// Addresses already held stay held (a VM runs with them); new ones only for the
		// claims of rackwire's VM controller.
		why, err := r.fromVM(ctx, claim)
		if err != nil {
			return ctrl.Result{}, err
		}
		if why != "" {
			return ctrl.Result{}, r.writeOutcome(ctx, claim, claim.DeepCopy(), outcome{ReasonNotServed, why})
		}
	}
	if !ours {
		patch := client.MergeFrom(claim.DeepCopy())
		controllerutil.AddFinalizer(claim, Finalizer)
		return ctrl.Result{}, r.Patch(ctx, claim, patch)
	}

	before := claim.DeepCopy()
	var o outcome
	var result ctrl.Result
	switch {
	case len(claim.Status.IPs) > 0 && net.ok:
		// Never rewritten: make sure the addresses are still held.
		if o, err = r.keep(ctx, claim, net.net); err != nil {
			return ctrl.Result{}, err
		}
	case len(claim.Status.IPs) > 0:
		// The NAD went: the addresses stay the claim's until it goes.
		return ctrl.Result{}, nil
	case !net.ok:
		o = outcome{net.reason, net.problem}
	default:
		ips, err := r.allocate(ctx, claim, net.net)
		var ex errExhausted
		switch {
		case errors.As(err, &ex):
			o, result = exhausted(net.net.Name, ex), ctrl.Result{RequeueAfter: r.ExhaustedRetry}
		case err != nil:
			return ctrl.Result{}, err
		default:
			claim.Status.IPs, o = ips, allocated(ips)
		}
	}
	if o.ok() && net.shared != "" {
		o.message += "; " + net.shared
	}
	return result, r.writeOutcome(ctx, claim, before, o)
}

// writeOutcome sets the claim's condition from the outcome, patches the status if it changed,
// and sends an Event when the condition did.
func (r *ClaimReconciler) writeOutcome(ctx context.Context, claim, before *ipamclaimsv1alpha1.IPAMClaim, o outcome) error {
	changed := o.apply(claim)
	if claim.Status.IPs == nil {
		claim.Status.IPs = []string{} // status.ips is required by the CRD
	}
	if !equality.Semantic.DeepEqual(before.Status, claim.Status) {
		// Locked to the version read: status.ips is written whole, and a write from a read
		// older than someone else's addresses (a restore, the earlier VM's claim) would
		// replace them. A conflict is retried from a fresh read.
		if err := r.Status().Patch(ctx, claim, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
	}
	// A problem is an Event too; a success is the condition alone: a burst of a thousand VMs
	// would otherwise cost the apiserver a thousand Events saying what status.ips says.
	if changed && !o.ok() {
		r.Recorder.Eventf(claim, nil, o.eventType(), o.reason, "Allocate", "%s", o.message)
	}
	return nil
}

// keep checks that every address of status.ips still has the claim's reservation, and
// recreates a missing one (deleted by hand, or lost with a restored backup).
func (r *ClaimReconciler) keep(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim, n cniconf.Network) (outcome, error) {
	for _, ip := range claim.Status.IPs {
		p, err := netip.ParsePrefix(ip)
		if err != nil {
			continue
		}
		// One cached read per address: a reconcile of an allocated claim (every status
		// write brings one) must not cost a read of the whole network.
		var o nodeslicev1alpha1.OverlappingRangeIPReservation
		key := client.ObjectKey{Namespace: r.Namespace, Name: cniconf.ReservationName(n.NetworkName, p.Addr().Unmap())}
		err = r.Get(ctx, key, &o)
		if apierrors.IsNotFound(err) {
			// The status write that wakes this reconcile can reach the cache before the
			// reservation it follows: a live read, not a create that answers AlreadyExists.
			err = r.Live.Get(ctx, key, &o)
		}
		if err == nil && holdsFor(&o, claim) {
			continue
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return outcome{}, err
		}
		mine, created, err := r.createReservation(ctx, claim, n, p.Addr().Unmap())
		if err != nil {
			return outcome{}, err
		}
		if created {
			// Someone deleted it (whereabouts' ip-control-loop deletes every reservation
			// whose podref is no pod), or it was lost with a restored backup.
			restored.WithLabelValues(n.NetworkName).Inc()
			r.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, ReasonRestored, "Restore",
				"reservation %s/%s of address %s was missing and is put back", r.Namespace, cniconf.ReservationName(n.NetworkName, p.Addr().Unmap()), p.Addr())
		}
		if !mine {
			return outcome{ReasonAddressTaken, fmt.Sprintf("address %s of status.ips is held by someone else's reservation %s",
				ip, cniconf.ReservationName(n.NetworkName, p.Addr().Unmap()))}, nil
		}
	}
	return allocated(claim.Status.IPs), nil
}

// finish releases a deleted claim's addresses and lets it go, but only once rackwire's
// finalizer is the last one: the VM's finalizer (kubevirt.io/persistent-ipam) keeps a claim
// that a foreground deletion removed while the VM still runs, and its address with it.
func (r *ClaimReconciler) finish(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim) error {
	if !controllerutil.ContainsFinalizer(claim, Finalizer) || len(claim.Finalizers) > 1 {
		return nil
	}
	// Forgotten before the reservations go, not after: their deletion wakes the claims
	// waiting for an address, which must find them free. Until the cache shows the
	// deletion, it shows the reservations, which hold the addresses meanwhile.
	picked := r.picks.of(claimKey(claim))
	r.picks.forget(claimKey(claim))
	n, err := r.release(ctx, claim, picked)
	if err != nil {
		return err
	}
	patch := client.MergeFrom(claim.DeepCopy())
	controllerutil.RemoveFinalizer(claim, Finalizer)
	if err := r.Patch(ctx, claim, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.Recorder.Eventf(claim, nil, "Normal", ReasonReleased, "Release", "%d reservation(s) deleted, addresses %v free", n, claim.Status.IPs)
	return nil
}

// release deletes the claim's reservations: those the apiserver lists with its labels and
// those this process picked for it (a create whose answer was lost), each only if it still
// names the claim. NotFound is fine; any other error is retried, never taken as done.
func (r *ClaimReconciler) release(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim, picked map[string][]netip.Addr) (int, error) {
	var list nodeslicev1alpha1.OverlappingRangeIPReservationList
	if err := r.Live.List(ctx, &list, client.InNamespace(r.Namespace),
		client.MatchingLabels{LabelClaim: claim.Name, LabelClaimNamespace: claim.Namespace}); err != nil {
		return 0, err
	}
	found := map[string]bool{}
	deleted := 0
	for i := range list.Items {
		o := &list.Items[i]
		found[o.Name] = true
		if !holdsFor(o, claim) {
			continue
		}
		if err := r.deleteReservation(ctx, o); err != nil {
			return 0, err
		}
		deleted++
	}
	for scope, addrs := range picked {
		for _, a := range addrs {
			name := cniconf.ReservationName(scope, a)
			if found[name] {
				continue
			}
			var o nodeslicev1alpha1.OverlappingRangeIPReservation
			err := r.Live.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, &o)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return 0, err
			}
			if holdsFor(&o, claim) {
				if err := r.deleteReservation(ctx, &o); err != nil {
					return 0, err
				}
				deleted++
			}
		}
	}
	return deleted, nil
}

// deleteReservation deletes that very object: a reservation deleted and recreated by
// someone else in the meantime is theirs (the UID precondition fails and it stays).
func (r *ClaimReconciler) deleteReservation(ctx context.Context, o *nodeslicev1alpha1.OverlappingRangeIPReservation) error {
	err := r.Delete(ctx, o, client.Preconditions{UID: &o.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
