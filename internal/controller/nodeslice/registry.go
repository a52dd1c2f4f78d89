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
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/slicing"
)

// registry holds every network's in-memory state. Event handlers note changes under mu;
// everything else in a network is touched only by its reconcile, which the work queue never
// runs twice at once for one network.
type registry struct {
	mu   sync.Mutex
	nets map[string]*network
}

// network is one network's state between reconciles.
type network struct {
	// Guarded by registry.mu.
	pending    map[string]struct{} // Nodes created or deleted since the last reconcile
	holdsDirty bool                // an IPPool gained its first or lost its last address
	written    []string            // resourceVersions of our last writes

	// Reconcile only.
	cfg       slicing.Network
	assign    *slicing.Assigner
	pool      *nodeslicev1alpha1.NodeSlicePool // as last written or read
	rebuild   bool
	unwritten time.Time // the oldest Node or IPPool event not yet written (zero: none)
	lastEvent time.Time // the newest
	lastWrite time.Time // when the last write (or write attempt) ended
	lastTook  time.Duration
	waiting   map[string]struct{}         // Nodes without a slice
	poolHeld  []slicing.Hold              // IPPools holding addresses
	released  map[netip.Prefix]quarantine // slices nodes lost, kept from the others for a while
	reported  map[string]string           // NAD key -> the last problem reported on it
	told      map[string]struct{}         // waiting Nodes already named in an Event
	handTold  map[string]types.UID        // NAD key -> the hand-written pool it was told of
	// The pool written by hand as last seen: once it is gone, the Nodes keep the slices it
	// listed (their binaries read them), as they would keep those of a stored pool.
	hand *nodeslicev1alpha1.NodeSlicePool
}

// quarantine is a slice that node held until recently.
type quarantine struct {
	node  string
	until time.Time
}

func newRegistry() *registry { return &registry{nets: map[string]*network{}} }

func (r *registry) get(name string) *network {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nets[name]
	if !ok {
		n = &network{pending: map[string]struct{}{}, waiting: map[string]struct{}{}, released: map[netip.Prefix]quarantine{}, reported: map[string]string{}}
		r.nets[name] = n
	}
	return n
}

func (r *registry) drop(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.nets, name)
}

// noteNode records a Node created or deleted in every network and returns their names.
func (r *registry) noteNode(node string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.nets))
	for name, n := range r.nets {
		n.pending[node] = struct{}{}
		names = append(names, name)
	}
	return names
}

// noteHolds marks every network's IPPool holds stale and returns their names.
func (r *registry) noteHolds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.nets))
	for name, n := range r.nets {
		n.holdsDirty = true
		names = append(names, name)
	}
	return names
}

// take hands a reconcile what was noted since the last one.
func (r *registry) take(n *network) (pending []string, holdsDirty bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for node := range n.pending {
		pending = append(pending, node)
	}
	clear(n.pending)
	holdsDirty, n.holdsDirty = n.holdsDirty, false
	slices.Sort(pending)
	return pending, holdsDirty
}

// giveBack returns what a failed reconcile took, so that the retry sees it.
func (r *registry) giveBack(n *network, pending []string, holdsDirty bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, node := range pending {
		n.pending[node] = struct{}{}
	}
	n.holdsDirty = n.holdsDirty || holdsDirty
}

// noted records when a reconcile took Node or IPPool events (changed).
func (n *network) noted(changed bool, now time.Time) {
	if !changed {
		return
	}
	if n.unwritten.IsZero() {
		n.unwritten = now
	}
	n.lastEvent = now
}

const keepWritten = 32

func (r *registry) wrote(n *network, rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n.written = append(n.written, rv)
	if len(n.written) > keepWritten {
		n.written = n.written[len(n.written)-keepWritten:]
	}
}

// ours says whether resourceVersion rv of the network's pool is one we wrote.
func (r *registry) ours(name, rv string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.nets[name]
	return ok && slices.Contains(n.written, rv)
}
