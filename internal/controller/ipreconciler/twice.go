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

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler/holder"
)

// A live pod's allocation whose address's reservation names another holder is one address
// on two holders: the reservation was deleted under one of them and another pool of the
// network (a NAD with an overlapping range, a whereabouts binary) handed the address out
// again before the put-back. Nothing here can choose which holder keeps it, so the manager
// says so, once per pair, on the pod and in a counter; the way out is deleting the pod that
// should not have it. An ADD or DEL in flight shows the same picture for a moment (the
// cache reads the pools and the reservations apart), so a pair is reported only once it has
// lasted heldTwiceAfter and the apiserver, read past the cache, still shows it.

// heldTwiceAfter is how long a pair lasts before it is reported.
const heldTwiceAfter = 2 * time.Second

// twice is an allocation and the reservation of its address, held by someone else.
type twice struct {
	entry
	o *nodeslicev1alpha1.OverlappingRangeIPReservation
}

// pairSeen is when a pair was first seen, and whether it has been reported.
type pairSeen struct {
	since    time.Time
	reported bool
}

func (t twice) pairKey() string {
	return string(t.o.UID) + "/" + string(t.pool.UID) + "/" + t.key + "/" + t.alloc.ContainerID + "/" + t.alloc.IfName
}

// sameHolder says whether the reservation names the allocation's holder: its container and
// interface, or, for reservations of writers that record neither, its pod.
func sameHolder(o *nodeslicev1alpha1.OverlappingRangeIPReservation, al nodeslicev1alpha1.IPAllocation) bool {
	if o.Spec.ContainerID == "" {
		return o.Spec.PodRef == al.PodRef
	}
	return o.Spec.ContainerID == al.ContainerID && (o.Spec.IfName == "" || o.Spec.IfName == al.IfName)
}

// reportTwice reports the pairs that have lasted, and forgets those no longer seen.
func (r *Reconciler) reportTwice(ctx context.Context, n networks, p *plan, now time.Time) error {
	scope := n.scope.NetworkName
	r.mu.Lock()
	if r.twice == nil {
		r.twice = map[string]map[string]pairSeen{}
	}
	before := r.twice[scope]
	r.mu.Unlock()
	seen := map[string]pairSeen{}
	var errs []error
	for _, t := range p.twice {
		k := t.pairKey()
		s, ok := before[k]
		if !ok {
			s = pairSeen{since: now}
		}
		if left := heldTwiceAfter - now.Sub(s.since); !s.reported && left > 0 {
			p.next = min(p.next, left)
		} else if !s.reported {
			still, err := r.stillTwice(ctx, t)
			errs = append(errs, err)
			if still {
				r.sayTwice(ctx, n, t)
				s.reported = true
			}
		}
		seen[k] = s
	}
	r.mu.Lock()
	r.twice[scope] = seen
	r.mu.Unlock()
	return errors.Join(errs...)
}

// stillTwice reads the allocation and the reservation past the cache.
func (r *Reconciler) stillTwice(ctx context.Context, t twice) (bool, error) {
	if held, err := r.allocated(ctx, t.entry); err != nil || !held {
		return false, err
	}
	live := &nodeslicev1alpha1.OverlappingRangeIPReservation{}
	if err := r.Live.Get(ctx, client.ObjectKeyFromObject(t.o), live); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return live.UID == t.o.UID && !sameHolder(live, t.alloc), nil
}

func (r *Reconciler) sayTwice(ctx context.Context, n networks, t twice) {
	heldTwice.WithLabelValues(n.scope.NetworkName).Inc()
	other := t.o.Spec.PodRef
	if t.o.Labels[ipamclaim.LabelClaim] != "" {
		other = "IPAMClaim " + t.o.Labels[ipamclaim.LabelClaimNamespace] + "/" + t.o.Labels[ipamclaim.LabelClaim]
	}
	logf.FromContext(ctx).Info("address on two holders", "address", t.addr, "pool", t.pool.Name, "pod", t.alloc.PodRef,
		"reservation", t.o.Name, "reservedFor", other)
	if t.o.Spec.ContainerID != "" {
		other += " (container " + t.o.Spec.ContainerID + ")"
	}
	msg := "address %s is recorded for this pod (container %s, interface %s) in IPPool %s/%s, but its reservation %s/%s is held by %s: " +
		"one address on two holders, after its reservation was deleted under one of them; delete the pod that should not have it"
	args := []any{t.addr, t.alloc.ContainerID, t.alloc.IfName, t.pool.Namespace, t.pool.Name, t.o.Namespace, t.o.Name, other}
	if ns, name, ok := holder.PodRef(t.alloc.PodRef); ok {
		pod := &corev1.Pod{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err == nil {
			r.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, ReasonHeldTwice, "Check", msg, args...)
			return
		}
	}
	r.Recorder.Eventf(t.pool, nil, corev1.EventTypeWarning, ReasonHeldTwice, "Check", msg, args...)
}
