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

package nodeslice

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// nodeEvents notes a Node created or deleted in every network and wakes each once; a
// Node's updates change nothing (a slice belongs to a node name).
func (r *Reconciler) nodeEvents() handler.EventHandler {
	note := func(node string, q queue) {
		for _, name := range r.nets.noteNode(node) {
			q.Add(r.request(name))
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { note(e.Object.GetName(), q) },
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { note(e.Object.GetName(), q) },
	}
}

// ipPoolEvents wakes every network when an IPPool starts or stops holding addresses: its
// slice may be held from, or freed for, other nodes. Allocations coming and going in a
// busy pool wake nothing.
func (r *Reconciler) ipPoolEvents() handler.EventHandler {
	held := func(o any) bool {
		p, ok := o.(*nodeslicev1alpha1.IPPool)
		return ok && len(p.Spec.Allocations) > 0
	}
	wake := func(q queue) {
		for _, name := range r.nets.noteHolds() {
			q.Add(r.request(name))
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			if held(e.Object) {
				wake(q)
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			if held(e.ObjectOld) != held(e.ObjectNew) {
				wake(q)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			if held(e.Object) {
				wake(q)
			}
		},
	}
}

// poolEvents wakes a pool's network when someone else wrote or deleted it; our own writes
// coming back through the cache wake nothing.
func (r *Reconciler) poolEvents() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			if !r.nets.ours(e.Object.GetName(), e.Object.GetResourceVersion()) {
				q.Add(r.request(e.Object.GetName()))
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			if !r.nets.ours(e.ObjectNew.GetName(), e.ObjectNew.GetResourceVersion()) {
				q.Add(r.request(e.ObjectNew.GetName()))
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { q.Add(r.request(e.Object.GetName())) },
	}
}
