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
	"fmt"
	"net/netip"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler/holder"
)

// claimAddress is an address of a claim's status.ips.
type claimAddress struct {
	claim *ipamclaimsv1alpha1.IPAMClaim
	addr  netip.Addr
}

func claimAddr(ip string) (netip.Addr, bool) {
	p, err := netip.ParsePrefix(ip)
	if err != nil {
		return netip.Addr{}, false
	}
	return p.Addr().Unmap(), true
}

// restorePods puts back the reservation of an allocation whose pod is alive. The pod and
// the allocation are read past the cache first, and the allocation again after the
// create: an allocation a DEL removed meanwhile takes the new reservation with it.
func (r *Reconciler) restorePods(ctx context.Context, n networks, v *view, p *plan) error {
	var errs []error
	for _, e := range p.restore {
		name := cniconf.ReservationName(n.scope.NetworkName, e.addr)
		ns, podName, _ := holder.PodRef(e.alloc.PodRef)
		pod := &corev1.Pod{}
		if err := r.Live.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName}, pod); err != nil {
			errs = append(errs, client.IgnoreNotFound(err))
			continue
		}
		if reason, _, err := r.verdict(ctx, r.Live, e.alloc.PodRef, r.evidence(v, e)); err != nil || reason != holder.Alive {
			errs = append(errs, err)
			continue
		}
		if held, err := r.allocated(ctx, e); err != nil || !held {
			errs = append(errs, err)
			continue
		}
		o := &nodeslicev1alpha1.OverlappingRangeIPReservation{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.Namespace, Annotations: map[string]string{AnnotationPodUID: string(pod.UID)}},
			Spec:       nodeslicev1alpha1.OverlappingRangeIPReservationSpec{ContainerID: e.alloc.ContainerID, PodRef: e.alloc.PodRef, IfName: e.alloc.IfName},
		}
		if err := r.Create(ctx, o); err != nil {
			// AlreadyExists: the holder (or the CNI plugin) put it back first, or someone else
			// holds the address: either way not ours to write.
			if !apierrors.IsAlreadyExists(err) {
				errs = append(errs, fmt.Errorf("re-creating reservation %s/%s: %w", r.Namespace, name, err))
			}
			continue
		}
		if held, err := r.allocated(ctx, e); err != nil || !held {
			// Released while we wrote: take the reservation back. An error here leaves it to
			// the reaping of a reservation without allocation.
			uid := o.UID
			errs = append(errs, err, client.IgnoreNotFound(r.Delete(ctx, o, client.Preconditions{UID: &uid})))
			continue
		}
		restored.WithLabelValues(n.scope.NetworkName, holderPod).Inc()
		logf.FromContext(ctx).Info("reservation restored", "reservation", name, "pod", e.alloc.PodRef, "pool", e.pool.Name)
		r.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, ReasonRestored, "Restore",
			"reservation %s/%s of address %s (IPPool %s, interface %s) was deleted while this pod holds the address; re-created",
			r.Namespace, name, e.addr, e.pool.Name, e.alloc.IfName)
	}
	return errors.Join(errs...)
}

// allocated reads the allocation's IPPool past the cache: does it still record the
// allocation for the same container and interface?
func (r *Reconciler) allocated(ctx context.Context, e entry) (bool, error) {
	live := &nodeslicev1alpha1.IPPool{}
	if err := r.Live.Get(ctx, client.ObjectKeyFromObject(e.pool), live); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	al, ok := live.Spec.Allocations[e.key]
	return ok && al.ContainerID == e.alloc.ContainerID && al.PodRef == e.alloc.PodRef && al.IfName == e.alloc.IfName, nil
}

// restoreClaims puts back the reservation of an IPAMClaim's address, as the claim
// controller writes it. The claim is read past the cache before and after the create: a
// claim that is being released takes the new reservation back.
func (r *Reconciler) restoreClaims(ctx context.Context, n networks, p *plan) error {
	var errs []error
	for _, ca := range p.restoreClaims {
		key := client.ObjectKeyFromObject(ca.claim)
		if alive, err := r.claimAlive(ctx, key); err != nil || !alive {
			errs = append(errs, err)
			continue
		}
		name := cniconf.ReservationName(n.scope.NetworkName, ca.addr)
		o := &nodeslicev1alpha1.OverlappingRangeIPReservation{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.Namespace, Labels: map[string]string{
				ipamclaim.LabelClaim: key.Name, ipamclaim.LabelClaimNamespace: key.Namespace, ipamclaim.LabelManagedBy: "rackwire",
			}},
			Spec: nodeslicev1alpha1.OverlappingRangeIPReservationSpec{PodRef: key.String()},
		}
		if err := r.Create(ctx, o); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				errs = append(errs, fmt.Errorf("re-creating reservation %s/%s: %w", r.Namespace, name, err))
			}
			continue
		}
		if alive, err := r.claimAlive(ctx, key); err != nil || !alive {
			uid := o.UID
			errs = append(errs, err, client.IgnoreNotFound(r.Delete(ctx, o, client.Preconditions{UID: &uid})))
			continue
		}
		restored.WithLabelValues(n.scope.NetworkName, holderClaim).Inc()
		logf.FromContext(ctx).Info("reservation restored", "reservation", name, "ipamclaim", key.String())
		r.Recorder.Eventf(ca.claim, nil, corev1.EventTypeWarning, ReasonRestored, "Restore",
			"reservation %s/%s of address %s was deleted while this claim holds the address; re-created", r.Namespace, name, ca.addr)
	}
	return errors.Join(errs...)
}

// claimAlive says the claim still holds its addresses: rackwire's finalizer on it, and no
// deletion under way (the claim controller then releases the reservations).
func (r *Reconciler) claimAlive(ctx context.Context, key client.ObjectKey) (bool, error) {
	c := &ipamclaimsv1alpha1.IPAMClaim{}
	if err := r.Live.Get(ctx, key, c); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return c.DeletionTimestamp.IsZero() && hasFinalizer(c.Finalizers, ipamclaim.Finalizer), nil
}
