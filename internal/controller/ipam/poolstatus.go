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

package ipam

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// StatusEntriesPerSecond bounds how many status.allocations entries a pool whose
// addresses keep changing has written per second. Every write of a pool costs the
// apiserver, etcd and every watcher in proportion to its allocations (test/bench measured
// about a tenth of a millisecond of CPU per entry and write): written at a fixed interval,
// a filling pool made each claim slower, against what DESIGN.md 4 promises. Spacing the
// writes of a busy pool in proportion to its size keeps their cost per second flat.
const StatusEntriesPerSecond = 500

// StatusSpacing is the least time between two status writes of a pool with allocations
// entries while its addresses keep changing.
func StatusSpacing(allocations int) time.Duration {
	return max(PoolStatusInterval, time.Duration(allocations)*time.Second/StatusEntriesPerSecond)
}

// statusWait is how long the status of a pool whose spec it reflects must still wait
// before it is written: at least PoolStatusInterval after the last write and, while its
// addresses are changing, until they have not changed for PoolStatusInterval, or until
// StatusSpacing has passed since the last write. So a burst of claims gets one write when
// it is over, and a long one a write every StatusSpacing. Spec changes, deletion and a
// first status are written at once. written is when this process last wrote the status
// (zero if it did not: after a restart, status.lastUpdated, which has whole seconds only,
// says); changed is when the pool's addresses last changed.
func statusWait(pool *ipamv1alpha1.IPPool, written, changed, now time.Time) time.Duration {
	if pool.Status.LastUpdated == nil || pool.Status.ObservedGeneration != pool.Generation {
		return 0
	}
	if last := pool.Status.LastUpdated.Time; last.After(written) {
		written = last
	}
	wait := written.Add(PoolStatusInterval).Sub(now)
	if quiet := changed.Add(PoolStatusInterval).Sub(now); quiet > wait {
		spaced := written.Add(StatusSpacing(statusEntries(pool))).Sub(now)
		wait = max(wait, min(quiet, spaced))
	}
	return wait
}

// statusEntries is how many allocations a status rebuild of the pool goes through: its
// indexes, or, once they are omitted, the addresses its usage counts (the rebuild still
// reads each of them, and omitted indexes mean a busy pool).
func statusEntries(pool *ipamv1alpha1.IPPool) int {
	n := len(pool.Status.Indexes)
	if pool.Status.Indexes == nil && pool.Status.Usage != nil {
		n = int(min(pool.Status.Usage.Used, int64(1)<<31))
	}
	return n
}

// poolActivity holds, per pool, when its addresses last changed (as the IPAddress events
// tell) and when this process last wrote its status.
type poolActivity struct {
	mu   sync.Mutex
	last map[types.NamespacedName]activityTimes
}

type activityTimes struct{ written, changed time.Time }

func (a *poolActivity) update(pool types.NamespacedName, fn func(*activityTimes)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last == nil {
		a.last = map[types.NamespacedName]activityTimes{}
	}
	t := a.last[pool]
	fn(&t)
	a.last[pool] = t
}

func (a *poolActivity) changed(pool types.NamespacedName, at time.Time) {
	a.update(pool, func(t *activityTimes) { t.changed = at })
}

func (a *poolActivity) wrote(pool types.NamespacedName, at time.Time) {
	a.update(pool, func(t *activityTimes) { t.written = at })
}

func (a *poolActivity) times(pool types.NamespacedName) (written, changed time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.last[pool]
	return t.written, t.changed
}

func (a *poolActivity) forget(pool types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.last, pool)
}
