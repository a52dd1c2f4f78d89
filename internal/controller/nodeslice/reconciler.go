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
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// conflictRetry is how soon a network whose write lost a race is reconciled again.
const conflictRetry = 50 * time.Millisecond

// Reconciler keeps one network's NodeSlicePool: its request is the pool's key.
type Reconciler struct {
	client.Client
	// Live reads around the cache, after a write conflicted.
	Live      client.Reader
	Recorder  events.EventRecorder
	Namespace string
	Grace     time.Duration
	// WriteInterval is the longest a change waits for its write while Node events keep
	// coming; WriteQuiet is how long Nodes must be quiet for a write to go at once.
	WriteInterval, WriteQuiet time.Duration

	nets *registry
}

// Reconcile brings a network's pool in line with its NADs and the Nodes.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	c, err := r.readNADs(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if wait, err := r.gather(ctx, req.Name, c); wait > 0 || err != nil {
		return ctrl.Result{RequeueAfter: wait}, err
	}
	pool := &nodeslicev1alpha1.NodeSlicePool{}
	switch err := r.Get(ctx, req.NamespacedName, pool); {
	case apierrors.IsNotFound(err):
		pool = nil
	case err != nil:
		return ctrl.Result{}, err
	}
	if len(c.views) == 0 {
		r.nets.drop(req.Name)
		nodesWithoutSlice.DeleteLabelValues(req.Name)
		return ctrl.Result{}, r.retire(ctx, pool)
	}
	n := r.nets.get(req.Name)
	if pool != nil && !writtenByController(pool) {
		r.leaveAlone(n, c, pool)
		return ctrl.Result{}, nil
	}
	n.handTold = nil
	r.reportNADs(n, c)
	if c.ref == nil {
		// No NAD of the network reads well: the pool, if any, keeps its slices and says why.
		return ctrl.Result{}, r.write(ctx, n, pool, r.desired(n, c, pool))
	}

	pending, holdsDirty := r.nets.take(n)
	now := time.Now()
	n.noted(len(pending) > 0 || holdsDirty, now)
	if n.pool != nil && pool != nil && !r.nets.ours(req.Name, pool.ResourceVersion) && pool.ResourceVersion != n.pool.ResourceVersion {
		n.rebuild = true // written by someone else
	}
	if n.pool != nil && pool == nil {
		n.rebuild = true // deleted by someone else
	}
	if n.assign == nil || n.rebuild || !n.cfg.SameSlicing(c.ref.net) {
		base := pool
		if n.rebuild {
			// A conflict or someone else's write or delete: the stored pool, not the cache,
			// is the truth (a person may have written their own in place of ours).
			base = &nodeslicev1alpha1.NodeSlicePool{}
			if err := r.Live.Get(ctx, req.NamespacedName, base); apierrors.IsNotFound(err) {
				base = nil
			} else if err != nil {
				r.nets.giveBack(n, pending, holdsDirty)
				return ctrl.Result{}, err
			}
			if base != nil && !writtenByController(base) {
				r.leaveAlone(n, c, base)
				return ctrl.Result{}, nil
			}
		}
		if err := r.rebuild(ctx, n, c.ref.net, base, now); err != nil {
			r.nets.giveBack(n, pending, holdsDirty)
			return ctrl.Result{}, err
		}
		n.pool = base
	} else if err := r.apply(ctx, n, pending, holdsDirty, now); err != nil {
		r.nets.giveBack(n, pending, holdsDirty)
		return ctrl.Result{}, err
	}

	want := r.desired(n, c, n.pool)
	if err := r.write(ctx, n, n.pool, want); err != nil {
		n.rebuild = true
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			// Someone else (or our own write, not yet in the cache) got there first: start
			// over from the stored pool.
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	r.reportWaiting(n)
	_, next := n.holds(now)
	return ctrl.Result{RequeueAfter: next}, nil
}

// gather applies the Node events of a network whose next write waits for more (see
// gatherFor), and says how long it waits; zero when this reconcile should run in full. A pool
// lists every slice, so reading, building, comparing and writing it costs the same whatever
// changed: while Nodes keep coming, none of that is done.
func (r *Reconciler) gather(ctx context.Context, name string, c choice) (time.Duration, error) {
	if len(c.views) == 0 || c.ref == nil {
		return 0, nil
	}
	n := r.nets.get(name)
	if n.assign == nil || n.rebuild || n.pool == nil || !n.cfg.SameSlicing(c.ref.net) {
		return 0, nil
	}
	pending, holdsDirty := r.nets.take(n)
	now := time.Now()
	n.noted(len(pending) > 0 || holdsDirty, now)
	wait := r.gatherFor(n, now)
	if wait <= 0 {
		r.nets.giveBack(n, pending, holdsDirty)
		return 0, nil
	}
	if err := r.apply(ctx, n, pending, holdsDirty, now); err != nil {
		r.nets.giveBack(n, pending, holdsDirty)
		return 0, err
	}
	return wait, nil
}

// burstSpacing is how many times its last write's duration a network leaves the apiserver
// alone after it while Nodes keep coming: a loaded apiserver answers slower, and the writes
// then space out (as with a controller that writes one pool at a time) rather than take the
// Nodes' turn. Once Nodes are quiet, one duration is enough.
const burstSpacing = 4

// gatherFor is how long the network's next write waits for more Node events: nothing when no
// Node event is waiting for a write, when the oldest one has waited WriteInterval, or when
// Nodes have been quiet for WriteQuiet (the end of a burst, or a lone Node); but never less
// than burstSpacing times the last write's duration after it amid a burst, once after it
// at its end.
func (r *Reconciler) gatherFor(n *network, now time.Time) time.Duration {
	if n.unwritten.IsZero() {
		return 0
	}
	since := now.Sub(n.lastWrite)
	quiet := r.WriteQuiet - now.Sub(n.lastEvent)
	if quiet <= 0 {
		return max(n.lastTook-since, 0)
	}
	wait := max(min(r.WriteInterval-now.Sub(n.unwritten), quiet), burstSpacing*n.lastTook-since)
	// Look again when the Nodes would have been quiet long enough: the burst may end there.
	return max(min(wait, quiet), 0)
}

// write stores the desired pool when it differs from base (nil: create it).
func (r *Reconciler) write(ctx context.Context, n *network, base, want *nodeslicev1alpha1.NodeSlicePool) error {
	if want == nil || (base != nil && unchanged(base, want)) {
		// Nothing to write: the events since the last write changed nothing, so the next
		// one starts a new gathering.
		n.unwritten = time.Time{}
		return nil
	}
	var err error
	start := time.Now()
	if base == nil {
		err = r.Create(ctx, want)
	} else {
		err = r.Update(ctx, want)
	}
	n.lastWrite = time.Now()
	n.lastTook = n.lastWrite.Sub(start)
	if err != nil {
		return fmt.Errorf("writing NodeSlicePool %s/%s: %w", want.Namespace, want.Name, err)
	}
	r.nets.wrote(n, want.ResourceVersion)
	n.pool, n.unwritten = want, time.Time{}
	return nil
}

// retire deletes the pool of a network that no NAD asks for any more, if a controller wrote
// it (NAD owners, or our label); a pool written by hand stays.
func (r *Reconciler) retire(ctx context.Context, pool *nodeslicev1alpha1.NodeSlicePool) error {
	if pool == nil || !writtenByController(pool) {
		return nil
	}
	uid, rv := pool.UID, pool.ResourceVersion
	err := r.Delete(ctx, pool, client.Preconditions{UID: &uid, ResourceVersion: &rv})
	return client.IgnoreNotFound(err)
}
