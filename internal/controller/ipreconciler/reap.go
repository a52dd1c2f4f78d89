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
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler/holder"
)

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// reapAllocations removes, pool by pool in one JSON patch each, the allocations whose
// holder is gone; each holder is confirmed gone past the cache first. The patch tests every
// allocation it removes, so an allocation rewritten meanwhile (the address handed out
// again) fails the patch and is judged again. A reservation whose allocation went is
// reaped in the same reconcile.
func (r *Reconciler) reapAllocations(ctx context.Context, n networks, v *view, p *plan) error {
	var errs []error
	for pool, js := range p.reap {
		var ops []patchOp
		var done []judged
		for _, j := range js {
			ev := r.evidence(v, j.entry)
			reason, ok, err := r.verdict(ctx, r.Live, j.alloc.PodRef, ev)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !ok || reason == holder.Alive {
				continue
			}
			path := "/spec/allocations/" + j.key
			ops = append(ops,
				patchOp{Op: "test", Path: path + "/id", Value: j.alloc.ContainerID},
				patchOp{Op: "test", Path: path + "/podref", Value: j.alloc.PodRef},
				patchOp{Op: "remove", Path: path})
			done = append(done, judged{j.entry, reason})
		}
		if len(ops) == 0 {
			continue
		}
		body, err := json.Marshal(ops)
		if err != nil {
			return err
		}
		target := &nodeslicev1alpha1.IPPool{}
		target.Namespace, target.Name = pool.Namespace, pool.Name
		if err := r.Patch(ctx, target, client.RawPatch(types.JSONPatchType, body)); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
				continue // changed meanwhile: judged again from the cache next time
			}
			errs = append(errs, fmt.Errorf("removing %d allocation(s) from IPPool %s/%s: %w", len(done), pool.Namespace, pool.Name, err))
			continue
		}
		notes := make([]string, 0, len(done))
		for _, j := range done {
			reaped.WithLabelValues(n.scope.NetworkName, kindAllocation, string(j.reason)).Inc()
			delete(v.recorded, recordKey(j.addr, j.alloc.ContainerID))
			delete(v.recorded, recordKey(j.addr, j.alloc.PodRef))
			notes = append(notes, fmt.Sprintf("%s of %s (container %s, %s)", j.addr, j.alloc.PodRef, short(j.alloc.ContainerID), j.reason))
		}
		logf.FromContext(ctx).Info("reaped allocations", "pool", pool.Name, "allocations", notes)
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, ReasonReaped, "Reap", "removed %d allocation(s) of gone holders: %s",
			len(done), strings.Join(notes, "; "))
	}
	return errors.Join(errs...)
}

// reapReservations deletes the reservations whose holder is gone, once no allocation
// records their address for that holder; each is confirmed past the cache first.
func (r *Reconciler) reapReservations(ctx context.Context, n networks, v *view, p *plan) error {
	var errs []error
	for _, j := range p.reapReservations {
		o := j.o
		a, _ := cniconf.ReservedAddress(n.scope.NetworkName, o.Name)
		if v.recordedFor(a, o) {
			continue // its allocation goes first
		}
		ev := holder.Evidence{UID: o.Annotations[AnnotationPodUID], ReservedAt: o.CreationTimestamp.Time,
			Superseded: v.superseded(o.Spec.PodRef, o.Spec.IfName, o.Spec.ContainerID, o.CreationTimestamp.Time)}
		reason, ok, err := r.verdict(ctx, r.Live, o.Spec.PodRef, ev)
		if err != nil {
			errs = append(errs, err)
			continue
		} else if !ok || reason == holder.Alive {
			continue
		}
		uid, rv := o.UID, o.ResourceVersion
		target := &nodeslicev1alpha1.OverlappingRangeIPReservation{}
		target.Namespace, target.Name = o.Namespace, o.Name
		err = r.Delete(ctx, target, client.Preconditions{UID: &uid, ResourceVersion: &rv})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("deleting reservation %s/%s: %w", o.Namespace, o.Name, err))
			continue
		}
		reaped.WithLabelValues(n.scope.NetworkName, kindReservation, string(reason)).Inc()
		logf.FromContext(ctx).Info("reaped reservation", "reservation", o.Name, "podref", o.Spec.PodRef, "reason", reason)
		r.Recorder.Eventf(o, nil, corev1.EventTypeNormal, ReasonReaped, "Reap", "deleted: its holder %s (container %s) is gone (%s)",
			o.Spec.PodRef, short(o.Spec.ContainerID), reason)
	}
	return errors.Join(errs...)
}

// short is a container ID as the runtime prints it.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
