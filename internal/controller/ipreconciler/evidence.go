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
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler/holder"
)

// remember keeps what a deleted reservation said of its holder, until no allocation of the
// namespace names its container any more (forget).
func (r *Reconciler) remember(obj client.Object) {
	o, ok := obj.(*nodeslicev1alpha1.OverlappingRangeIPReservation)
	if !ok || o.Spec.ContainerID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.deleted[o.Spec.ContainerID]
	if ev.ReservedAt.IsZero() || o.CreationTimestamp.Time.Before(ev.ReservedAt) {
		ev.ReservedAt = o.CreationTimestamp.Time
	}
	if u := o.Annotations[AnnotationPodUID]; u != "" {
		ev.UID = u
	}
	r.deleted[o.Spec.ContainerID] = ev
}

// evidence is what the records, present and deleted, say of an entry's holder: its
// recorded UID, when its earliest reservation was created, whether a later sandbox of its
// pod holds the interface, and the pod's other entries for it.
func (r *Reconciler) evidence(v *view, e entry) holder.Evidence {
	al := e.alloc
	containerID := al.ContainerID
	ev := holder.Evidence{UID: v.uid[containerID], ReservedAt: v.reservedAt[containerID], Addr: e.addr, IfName: al.IfName}
	for _, s := range v.sandboxes[al.PodRef+"|"+al.IfName] {
		if s.containerID != containerID {
			ev.Siblings = append(ev.Siblings, s.addr)
		}
	}
	r.mu.Lock()
	gone, ok := r.deleted[containerID]
	r.mu.Unlock()
	if ok {
		if ev.UID == "" {
			ev.UID = gone.UID
		}
		if ev.ReservedAt.IsZero() || (!gone.ReservedAt.IsZero() && gone.ReservedAt.Before(ev.ReservedAt)) {
			ev.ReservedAt = gone.ReservedAt
		}
	}
	ev.Superseded = v.superseded(al.PodRef, al.IfName, containerID, ev.ReservedAt)
	return ev
}

// forget drops what is remembered of containers that no allocation of the namespace names.
func (r *Reconciler) forget(v *view) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for cid := range r.deleted {
		if !v.containers[cid] {
			delete(r.deleted, cid)
		}
	}
}
