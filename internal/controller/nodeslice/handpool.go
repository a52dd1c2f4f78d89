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
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// reasonNotManaged is the Warning Event on the NADs of a network whose pool was written by hand.
const reasonNotManaged = "NodeSlicePoolNotManaged"

// leaveAlone is the reconcile of a network whose stored pool was written by hand (neither
// rackwire's label nor a NAD owner): a person's pool, from which the CNI binaries read the
// Nodes' slices as it lists them, is not rackwire's to rewrite or delete. The network's
// slicing is forgotten, so that a pool handed over later (by the label) is taken from its
// stored allocations and never from what rackwire held before the person wrote theirs; the
// quarantined slices stay, as they guard addresses whoever writes the pool, as do those the
// person's write took from a node, and the pool is kept, for a rebuild once it is deleted.
// Each NAD is told once per pool.
func (r *Reconciler) leaveAlone(n *network, c choice, pool *nodeslicev1alpha1.NodeSlicePool) {
	r.nets.take(n) // a handover reads every Node again
	if n.hand == nil || n.hand.ResourceVersion != pool.ResourceVersion {
		// Every Node event wakes the network: compare only a pool not seen yet.
		listed := make(map[string]netip.Prefix, len(pool.Status.Allocations))
		for _, al := range pool.Status.Allocations {
			if s, err := netip.ParsePrefix(al.SliceRange); err == nil && al.NodeName != "" {
				listed[al.NodeName] = s.Masked()
			}
		}
		n.releaseMoved(func(node string) (netip.Prefix, bool) { s, ok := listed[node]; return s, ok }, r.graceEnd(time.Now()))
	}
	n.assign, n.pool, n.rebuild, n.unwritten = nil, nil, false, time.Time{}
	clear(n.waiting)
	n.told, n.hand = nil, pool
	nodesWithoutSlice.DeleteLabelValues(pool.Name)
	// A NAD that cannot be read is wrong whoever writes the pool; which NAD the others must
	// agree with is the pool's to say (its range is in the Event below), not the oldest NAD's.
	unread := choice{views: c.views, problems: map[string]string{}, reasons: map[string]string{}}
	for k, reason := range c.reasons {
		if reason == reasonInvalidConfig {
			unread.problems[k], unread.reasons[k] = c.problems[k], reason
		}
	}
	r.reportNADs(n, unread)
	told := make(map[string]types.UID, len(c.views))
	for _, v := range c.views {
		told[v.key()] = pool.UID
		if n.handTold[v.key()] == pool.UID {
			continue
		}
		r.Recorder.Eventf(v.nad, pool, corev1.EventTypeWarning, reasonNotManaged, "Slice",
			"NodeSlicePool %s/%s was written by hand (it has neither the label %s: %s nor a NetworkAttachmentDefinition owner): "+
				"rackwire neither writes nor deletes it, and Nodes hold only the slices it lists (range %s, slice size %s). "+
				"To have rackwire manage it and keep its slices, add the label %s=%s to it; or delete it, and rackwire writes the network's pool anew, its Nodes keeping the slices it lists",
			pool.Namespace, pool.Name, managedLabel, managedBy, pool.Spec.Range, pool.Spec.SliceSize, managedLabel, managedBy)
	}
	n.handTold = told
}
