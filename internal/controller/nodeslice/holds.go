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
	"net/netip"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/slicing"
)

// ipPoolHolds finds the network's per-node IPPools that hold addresses: whereabouts names
// them <network_name>-<node>-<slice> (or <node>-<slice>), so their node and slice are known.
func (r *Reconciler) ipPoolHolds(ctx context.Context, cfg slicing.Network) ([]slicing.Hold, error) {
	var list nodeslicev1alpha1.IPPoolList
	if err := r.List(ctx, &list, client.InNamespace(r.Namespace)); err != nil {
		return nil, err
	}
	var holds []slicing.Hold
	for i := range list.Items {
		p := &list.Items[i]
		if len(p.Spec.Allocations) == 0 {
			continue
		}
		prefix, err := netip.ParsePrefix(p.Spec.Range)
		if err != nil || !prefix.Overlaps(cfg.Range) {
			continue
		}
		if node, ok := cfg.NodeOfPool(p.Name, p.Spec.Range); ok {
			holds = append(holds, slicing.Hold{Prefix: prefix, Node: node})
		}
	}
	return holds, nil
}

// holds are the IPPool holds plus the slices in quarantine; expired quarantines are dropped.
// next is when the earliest remaining one ends (zero when none).
func (n *network) holds(now time.Time) (holds []slicing.Hold, next time.Duration) {
	holds = append(holds, n.poolHeld...)
	for s, q := range n.released {
		left := q.until.Sub(now)
		if left <= 0 {
			delete(n.released, s)
			continue
		}
		holds = append(holds, slicing.Hold{Prefix: s, Node: q.node})
		if next == 0 || left < next {
			next = left
		}
	}
	return holds, next
}

// release keeps slice away from nodes other than node for the grace period.
func (n *network) release(slice netip.Prefix, node string, until time.Time) {
	if until.IsZero() {
		return
	}
	n.released[slice] = quarantine{node: node, until: until}
}

// releaseMoved keeps from the other nodes, for the grace period, each slice that the pool
// last seen (rackwire's last write or read, else the hand-written one) gave a node that no
// longer holds it (holds says what each node holds now): a second writer moved the node, whose
// binaries read the old slice until just now.
func (n *network) releaseMoved(holds func(node string) (netip.Prefix, bool), until time.Time) {
	last := n.pool
	if last == nil {
		last = n.hand
	}
	if last == nil {
		return
	}
	for _, al := range last.Status.Allocations {
		s, err := netip.ParsePrefix(al.SliceRange)
		if err != nil || al.NodeName == "" {
			continue
		}
		if cur, ok := holds(al.NodeName); !ok || cur != s.Masked() {
			n.release(s.Masked(), al.NodeName, until)
		}
	}
}
