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
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler/holder"
)

// Reconciler reaps and restores the records of one reservation scope: its request names
// the scope's network_name.
type Reconciler struct {
	client.Client
	// Live confirms past the cache what a write is about to act on.
	Live      client.Reader
	Recorder  events.EventRecorder
	Namespace string
	Grace     time.Duration
	Resync    time.Duration
	Skew      time.Duration
	// TrustNetworkStatus lets a pod's network-status annotation tell, on a network without
	// reservations, the entry of its live sandbox from an earlier one's. Whoever may update
	// the pod may write it, so a tenant could name the live sandbox's entry as the earlier
	// one and get its address handed to another pod: only an admission policy letting Multus
	// alone write it makes it evidence. Without it an earlier pod's entry leaks until the pod
	// goes, which never puts one address on two holders.
	TrustNetworkStatus bool

	scopes *scopes
	mu     sync.Mutex
	// since is, per scope and record, when its holder was first seen gone.
	since map[string]map[string]time.Time
	// deleted is, per container ID, what the deleted reservations of the container said of
	// their holder: when a reservation is deleted under an allocation, what tells an earlier
	// pod of the name from the live one goes with it.
	deleted map[string]holder.Evidence
	// twice is, per scope and pair, when an address on two holders was first seen (twice.go).
	twice map[string]map[string]pairSeen
	// warned is, per NAD UID, the whereabouts NADs it was last warned of sharing with.
	warned map[types.UID]string
}

// plan is what a reconcile of a scope decided.
type plan struct {
	// reap lists, per IPPool, the allocations to remove, each with its reason.
	reap map[*nodeslicev1alpha1.IPPool][]judged
	// reapReservations are the reservations to delete.
	reapReservations []judgedReservation
	// restore lists the allocations of live pods whose reservation is missing.
	restore []entry
	// restoreClaims lists the claims' addresses whose reservation is missing.
	restoreClaims []claimAddress
	// twice lists the allocations of live pods whose reservation names another holder.
	twice []twice
	// next is when a holder seen gone reaches the grace.
	next time.Duration
}

type judged struct {
	entry
	reason holder.Reason
}

type judgedReservation struct {
	o      *nodeslicev1alpha1.OverlappingRangeIPReservation
	reason holder.Reason
}

// Reconcile reaps the scope's records of gone holders and puts back the reservations of
// live ones.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	scope := req.Name
	n, found, err := r.networks(ctx, scope)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !found {
		r.scopes.drop(scope)
		r.mu.Lock()
		delete(r.since, scope)
		delete(r.twice, scope)
		r.mu.Unlock()
		return ctrl.Result{}, nil
	}
	r.scopes.add(scope)
	if err := r.checkMixed(ctx, n.nads); err != nil {
		return ctrl.Result{}, err
	}
	if len(n.scope.Ranges) == 0 {
		return ctrl.Result{RequeueAfter: r.Resync}, nil
	}
	v, err := r.read(ctx, n)
	if err != nil {
		return ctrl.Result{}, err
	}
	p, err := r.judge(ctx, n, v, time.Now())
	if err != nil {
		return ctrl.Result{}, err
	}
	r.forget(v)
	// Allocations first, then reservations: the order of a DEL.
	errs := []error{r.reapAllocations(ctx, n, v, p), r.reapReservations(ctx, n, v, p),
		r.restorePods(ctx, n, v, p), r.restoreClaims(ctx, n, p), r.reportTwice(ctx, n, p, time.Now())}
	return ctrl.Result{RequeueAfter: min(p.next, r.Resync)}, errors.Join(errs...)
}

// judge decides every record of the scope and notes since when each gone holder is gone.
func (r *Reconciler) judge(ctx context.Context, n networks, v *view, now time.Time) (*plan, error) {
	p := &plan{reap: map[*nodeslicev1alpha1.IPPool][]judged{}, next: r.Resync}
	seen := map[string]time.Time{}
	r.mu.Lock()
	if r.since == nil {
		r.since = map[string]map[string]time.Time{}
	}
	before := r.since[n.scope.NetworkName]
	r.mu.Unlock()
	// due says whether the record's holder has been gone for the grace period.
	due := func(key string) bool {
		t, ok := before[key]
		if !ok {
			t = now
		}
		seen[key] = t
		left := r.Grace - now.Sub(t)
		if left > 0 {
			p.next = min(p.next, left)
		}
		return left <= 0
	}
	name := n.scope.NetworkName
	for _, e := range v.entries {
		ev := r.evidence(v, e)
		reason, ok, err := r.verdict(ctx, r.Client, e.alloc.PodRef, ev)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // not a pod's: not ours to judge
		}
		if reason == holder.Alive {
			o, held := v.byName[cniconf.ReservationName(name, e.addr)]
			if !held && n.reserves(e.addr) {
				p.restore = append(p.restore, e)
			} else if held && !sameHolder(o, e.alloc) {
				p.twice = append(p.twice, twice{e, o})
			}
			continue
		}
		if due("a/" + string(e.pool.UID) + "/" + e.key + "/" + e.alloc.ContainerID + "/" + e.alloc.IfName) {
			p.reap[e.pool] = append(p.reap[e.pool], judged{e, reason})
		}
	}
	for _, o := range v.reservations {
		if v.claimHeld(o) {
			continue
		}
		ev := holder.Evidence{UID: o.Annotations[AnnotationPodUID], ReservedAt: o.CreationTimestamp.Time,
			Superseded: v.superseded(o.Spec.PodRef, o.Spec.IfName, o.Spec.ContainerID, o.CreationTimestamp.Time)}
		reason, ok, err := r.verdict(ctx, r.Client, o.Spec.PodRef, ev)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		// A live pod's reservation stays even when no allocation records it: its entry may
		// still be on the node, waiting for the flusher (the reservation is the only lock
		// until then). An ADD cut short under a live pod is undone by the runtime's DEL, or
		// reaped once the pod is gone.
		if reason != holder.Alive && due("r/"+string(o.UID)) {
			p.reapReservations = append(p.reapReservations, judgedReservation{o, reason})
		}
	}
	for _, c := range v.claims {
		if !c.DeletionTimestamp.IsZero() || !hasFinalizer(c.Finalizers, ipamclaim.Finalizer) {
			continue
		}
		for _, ip := range c.Status.IPs {
			a, ok := claimAddr(ip)
			if !ok || !n.scope.Within(a) {
				continue
			}
			if _, held := v.byName[cniconf.ReservationName(name, a)]; !held && n.reserves(a) {
				p.restoreClaims = append(p.restoreClaims, claimAddress{claim: c, addr: a})
			}
		}
	}
	r.mu.Lock()
	r.since[n.scope.NetworkName] = seen
	r.mu.Unlock()
	return p, nil
}

// recordedFor says an allocation of the namespace's IPPools matches the reservation.
func (v *view) recordedFor(a netip.Addr, o *nodeslicev1alpha1.OverlappingRangeIPReservation) bool {
	if o.Spec.ContainerID != "" {
		return v.recorded[recordKey(a, o.Spec.ContainerID)]
	}
	return v.recorded[recordKey(a, o.Spec.PodRef)]
}

// verdict judges the holder a podref names, reading pods and Nodes through reader (the
// cache, or the apiserver to confirm). ok is false when podref names no pod.
func (r *Reconciler) verdict(ctx context.Context, reader client.Reader, podRef string, ev holder.Evidence) (holder.Reason, bool, error) {
	ns, name, ok := holder.PodRef(podRef)
	if !ok {
		return holder.Alive, false, nil
	}
	pod := &corev1.Pod{}
	switch err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); {
	case apierrors.IsNotFound(err):
		return holder.Judge(nil, false, ev, r.Skew), true, nil
	case err != nil:
		return holder.Alive, false, err
	}
	hp := &holder.Pod{
		UID: string(pod.UID), Created: pod.CreationTimestamp.Time, Node: pod.Spec.NodeName,
		Finished: pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed,
	}
	if r.TrustNetworkStatus {
		hp.Interfaces = holder.NetworkStatus(pod.Annotations[holder.AnnotationNetworkStatus])
	}
	nodeExists := true
	if hp.Node != "" {
		node := &metav1.PartialObjectMetadata{}
		node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
		// Nodes are read from the cache even to confirm: a Node deleted stays deleted.
		switch err := r.Get(ctx, client.ObjectKey{Name: hp.Node}, node); {
		case apierrors.IsNotFound(err):
			nodeExists = false
		case err != nil:
			return holder.Alive, false, err
		}
	}
	return holder.Judge(hp, nodeExists, ev, r.Skew), true, nil
}

func hasFinalizer(fs []string, f string) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}
