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
	"slices"
	"sync"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rackwire/rackwire/internal/cniconf"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// A request names a scope by its network_name ("" for the unnamed scope); its namespace is
// left empty.
func request(scope string) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKey{Name: scope}}
}

// indexKey keeps the unnamed scope's index value non-empty.
func indexKey(scope string) string { return "scope:" + scope }

// scopeOfNAD is the reservation scope of a NAD of a rackwire network; false for other NADs.
// A configuration with an error still names its scope, so that the scope is looked at.
func scopeOfNAD(obj client.Object) (string, bool) {
	nad, ok := obj.(*nadv1.NetworkAttachmentDefinition)
	if !ok {
		return "", false
	}
	n, err := cniconf.Parse([]byte(nad.Spec.Config))
	if errors.Is(err, cniconf.ErrNotRackwire) {
		return "", false
	}
	return n.NetworkName, true
}

// overlapping says whether the NAD's rackwire ipam section keeps reservations
// (enable_overlapping_ranges, true unless set false, as in whereabouts): a network without
// them has nothing to put back.
func overlapping(config []byte) bool {
	type ipam struct {
		Type        string `json:"type"`
		Overlapping *bool  `json:"enable_overlapping_ranges"`
	}
	var top struct {
		IPAM    *ipam `json:"ipam"`
		Plugins []struct {
			IPAM *ipam `json:"ipam"`
		} `json:"plugins"`
	}
	if json.Unmarshal(config, &top) != nil {
		return true
	}
	sections := []*ipam{top.IPAM}
	for _, p := range top.Plugins {
		sections = append(sections, p.IPAM)
	}
	for _, s := range sections {
		if s != nil && s.Type == cniconf.IPAMType {
			return s.Overlapping == nil || *s.Overlapping
		}
	}
	return true
}

// scopes is the set of scopes the NADs name, so that an event that may concern any of them
// (a pod, a Node or a reservation deleted) wakes each once.
type scopes struct {
	mu  sync.Mutex
	set map[string]struct{}
}

func newScopes() *scopes { return &scopes{set: map[string]struct{}{}} }

func (s *scopes) add(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set[name] = struct{}{}
}

func (s *scopes) drop(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.set, name)
}

func (s *scopes) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.set))
	for k := range s.set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// nadEvents wakes the scope of a NAD created, changed (before and after) or deleted.
func (r *Reconciler) nadEvents() handler.EventHandler {
	wake := func(q queue, objs ...client.Object) {
		for _, o := range objs {
			if s, ok := scopeOfNAD(o); ok {
				r.scopes.add(s)
				q.Add(request(s))
			}
			// A whereabouts NAD on node slices may share them with any scope's.
			if len(whereaboutsSlices(o)) > 0 {
				for _, s := range r.scopes.all() {
					q.Add(request(s))
				}
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { wake(q, e.Object) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) { wake(q, e.ObjectOld, e.ObjectNew) },
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { wake(q, e.Object) },
	}
}

// reservationEvents remembers who a deleted reservation was for, and wakes every scope:
// the reservation may be a live holder's, to put back.
func (r *Reconciler) reservationEvents() handler.EventHandler {
	wake := r.everyScopeOnDelete()
	return handler.Funcs{
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			r.remember(e.Object)
			wake.Delete(ctx, e, q)
		},
	}
}

// everyScopeOnDelete wakes every scope when an object goes: a pod or Node gone starts the
// grace of its records; a reservation gone may be a live holder's.
func (r *Reconciler) everyScopeOnDelete() handler.EventHandler {
	return handler.Funcs{
		DeleteFunc: func(_ context.Context, _ event.DeleteEvent, q queue) {
			for _, s := range r.scopes.all() {
				q.Add(request(s))
			}
		},
	}
}
