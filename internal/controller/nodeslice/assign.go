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
	"maps"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/slicing"
)

var nodeGVK = corev1.SchemeGroupVersion.WithKind("Node")

// nodeNames lists the Nodes (metadata only), sorted.
func (r *Reconciler) nodeNames(ctx context.Context) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(nodeGVK.GroupVersion().WithKind("NodeList"))
	if err := r.List(ctx, list); err != nil {
		return nil, err
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
	}
	slices.Sort(names)
	return names, nil
}

func (r *Reconciler) nodeExists(ctx context.Context, name string) (bool, error) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(nodeGVK)
	err := r.Get(ctx, client.ObjectKey{Name: name}, m)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// rebuild starts the network's state over from base (the stored pool, nil when none) and
// every Node: a node keeps its stored slice when the slicing still has it and no other
// node's addresses are in it; a slice a node loses (its Node is gone, a re-cut range no
// longer has it, or a second writer moved the node) is kept from the others for the grace
// period; every other Node gets the lowest free slice.
func (r *Reconciler) rebuild(ctx context.Context, n *network, cfg slicing.Network, base *nodeslicev1alpha1.NodeSlicePool, now time.Time) error {
	a, err := slicing.NewAssigner(cfg)
	if err != nil {
		return err
	}
	if n.poolHeld, err = r.ipPoolHolds(ctx, cfg); err != nil {
		return err
	}
	nodes, err := r.nodeNames(ctx)
	if err != nil {
		return err
	}
	// What the nodes held before: the stored pool (what binaries may have read), else the
	// pool written by hand that was deleted since (what they read last), else this state's
	// own record.
	stored := base
	if stored == nil {
		stored = n.hand
	}
	var before []slicing.Assignment
	if stored != nil {
		for _, al := range stored.Status.Allocations {
			if s, err := netip.ParsePrefix(al.SliceRange); err == nil && al.NodeName != "" {
				before = append(before, slicing.Assignment{Node: al.NodeName, Slice: s})
			}
		}
	} else if n.assign != nil {
		before = n.assign.Listing(0)
	}
	holds, _ := n.holds(now)
	a.SetHolds(holds)
	exists := make(map[string]bool, len(nodes))
	for _, node := range nodes {
		exists[node] = true
	}
	for _, b := range before {
		if !exists[b.Node] || !a.Keep(b.Node, b.Slice) {
			n.release(b.Slice, b.Node, r.graceEnd(now))
		}
	}
	n.releaseMoved(a.Lookup, r.graceEnd(now))
	holds, _ = n.holds(now)
	a.SetHolds(holds)
	clear(n.waiting)
	for _, node := range nodes {
		if _, ok := a.Assign(node); !ok {
			n.waiting[node] = struct{}{}
		}
	}
	n.cfg, n.assign, n.rebuild, n.hand = cfg, a, false, nil
	return nil
}

func (r *Reconciler) graceEnd(now time.Time) time.Time {
	if r.Grace <= 0 {
		return time.Time{}
	}
	return now.Add(r.Grace)
}

// apply brings the state up to date with the Nodes noted since the last reconcile, and
// retries the waiting ones when slices may have come free.
func (r *Reconciler) apply(ctx context.Context, n *network, pending []string, holdsDirty bool, now time.Time) error {
	freed := holdsDirty
	if holdsDirty {
		var err error
		if n.poolHeld, err = r.ipPoolHolds(ctx, n.cfg); err != nil {
			return err
		}
	}
	for _, node := range pending {
		ok, err := r.nodeExists(ctx, node)
		if err != nil {
			return err
		}
		if ok {
			if _, has := n.assign.Assign(node); !has {
				n.waiting[node] = struct{}{}
			}
			continue
		}
		delete(n.waiting, node)
		if s, had := n.assign.Lookup(node); had {
			n.assign.Release(node)
			n.release(s, node, r.graceEnd(now))
			freed = true
		}
	}
	before := len(n.released)
	holds, _ := n.holds(now)
	if freed || len(n.released) != before {
		n.assign.SetHolds(holds)
	}
	for _, node := range slices.Sorted(maps.Keys(n.waiting)) {
		if _, ok := n.assign.Assign(node); ok {
			delete(n.waiting, node)
		}
	}
	return nil
}
