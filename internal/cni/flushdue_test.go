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

package cni

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFlushDue: when a flusher's write is due. Every entry then comes along (flushOnce takes
// all pending records), so a due write carries the youngest entries too.
func TestFlushDue(t *testing.T) {
	const window, quiet = 100 * time.Millisecond, 30 * time.Millisecond
	pending := entry{Pool: "p", Address: "10.0.0.1", Pending: true}
	reserving := entry{Pool: "p", Address: "10.0.0.2", Pending: true, Reserving: true}
	backingOff := entry{Pool: "p", Address: "10.0.0.3", Pending: true, RetryAt: time.Now().Add(20 * time.Second)}
	// A retry set before the clock stepped back an hour: further off than any backoff.
	steppedBack := entry{Pool: "p", Address: "10.0.0.5", Pending: true, Tries: 3, RetryAt: time.Now().Add(time.Hour)}
	type marker struct {
		age time.Duration
		e   entry
	}
	for _, tc := range []struct {
		name    string
		markers []marker
		due     flushDue
		want    bool
	}{
		{"nothing pending", nil, flushDue{window: window, quiet: quiet}, false},
		{"zero rule: now", []marker{{0, pending}}, flushDue{}, true},
		{"window reached, with a young entry beside", []marker{{150 * time.Millisecond, pending}, {2 * time.Millisecond, pending}}, flushDue{window: window, quiet: quiet}, true},
		{"quiet node: before the window", []marker{{60 * time.Millisecond, pending}, {40 * time.Millisecond, pending}}, flushDue{window: window, quiet: quiet}, true},
		{"an entry just came: wait", []marker{{60 * time.Millisecond, pending}, {5 * time.Millisecond, pending}}, flushDue{window: window, quiet: quiet}, false},
		{"writes too close (no quiet rule): the window decides", []marker{{60 * time.Millisecond, pending}, {40 * time.Millisecond, pending}}, flushDue{window: window}, false},
		{"no quiet rule, window reached", []marker{{120 * time.Millisecond, pending}, {40 * time.Millisecond, pending}}, flushDue{window: window}, true},
		// An ADD killed before its reservation, or a write backing off, leaves an old marker
		// behind: it must not make every new entry's write due at once (no batching left).
		{"an old reserving entry does not make a write due", []marker{{time.Hour, reserving}, {5 * time.Millisecond, pending}}, flushDue{window: window, quiet: quiet}, false},
		{"an old entry backing off does not make a write due", []marker{{time.Hour, backingOff}, {5 * time.Millisecond, pending}}, flushDue{window: window, quiet: quiet}, false},
		{"nor hold one back", []marker{{time.Hour, backingOff}, {40 * time.Millisecond, pending}}, flushDue{window: window, quiet: quiet}, true},
		// A clock stepped back after the marker was written: its age is unknown, and
		// waiting for the clock to catch up would leave the pool without it meanwhile.
		{"a marker in the future", []marker{{-time.Hour, pending}}, flushDue{window: window, quiet: quiet}, true},
		{"a retry set before the clock stepped back", []marker{{time.Hour, steppedBack}}, flushDue{window: window, quiet: quiet}, true},
		{"a release due", []marker{{150 * time.Millisecond, entry{Pool: "p", Address: "10.0.0.4", Releasing: true}}}, flushDue{window: window, quiet: quiet}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			var ms []agedMarker
			for i, m := range tc.markers {
				ms = append(ms, agedMarker{"c" + string(rune('0'+i)), "net1", m.age, m.e})
			}
			recs := agedPending(t, now, ms)
			if got := tc.due.now(recs, now); got != tc.want {
				t.Fatalf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFlushPacedByThePods: right after a write, a quiet node's entry waits for the window
// (writes stay apart by their duration), unless the pods come further apart than a write
// takes: then the write goes once the node is quiet, in the gap before the next pod, not
// at a moment that meets the next pod's ADD on the apiserver.
func TestFlushPacedByThePods(t *testing.T) {
	const took = 190 * time.Millisecond // a write of a pool of 1,000 entries
	for _, tc := range []struct {
		name string
		// lastNewest is how long ago the newest entry of the last write came; the one pending
		// entry came 40 ms ago, and the last write ended 50 ms ago.
		lastNewest time.Duration
		want       bool
	}{
		{"a pod 300 ms after the last: written once quiet", 300 * time.Millisecond, true},
		{"a pod 100 ms after the last: the window decides", 100 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			recs := agedPending(t, now, []agedMarker{{"c", "net1", 40 * time.Millisecond, entry{Pool: "p", Address: "10.0.0.1", Pending: true}}})
			c := &call{wrote: took, lastMarked: now.Add(-tc.lastNewest)}
			if got := c.due(nextWindow(took), now.Add(-50*time.Millisecond), now).now(recs, now); got != tc.want {
				t.Fatalf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFlushWritesABurstsTailOnceQuiet: right after a write of small pools only, entries are
// written once the node has been quiet for the quiet time, not a write's duration later: the
// tail of a burst, whose writes took long on a node busy with it, reaches the pool at once.
// After a write of a large pool, the same entries wait as TestFlushPacedByThePods says.
func TestFlushWritesABurstsTailOnceQuiet(t *testing.T) {
	const took = 250 * time.Millisecond // a write on a node busy with the burst
	for _, tc := range []struct {
		name  string
		small bool
		ages  []time.Duration // of the pending entries' markers
		want  bool
	}{
		{"a burst's tail, quiet for 35 ms", true, []time.Duration{35 * time.Millisecond, 38 * time.Millisecond, 45 * time.Millisecond}, true},
		{"a tail of one", true, []time.Duration{35 * time.Millisecond}, true},
		{"a burst still coming", true, []time.Duration{10 * time.Millisecond, 14 * time.Millisecond, 20 * time.Millisecond}, false},
		{"after a large pool's write: spaced", false, []time.Duration{35 * time.Millisecond, 38 * time.Millisecond, 45 * time.Millisecond}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			var ms []agedMarker
			for i, age := range tc.ages {
				ms = append(ms, agedMarker{fmt.Sprint("c", i), "net1", age, entry{Pool: "p", Address: fmt.Sprint("10.0.0.", i+1), Pending: true}})
			}
			recs := agedPending(t, now, ms)
			// The last write ended 60 ms ago; its newest entry came 70 ms ago.
			c := &call{wrote: took, wroteSmall: tc.small, lastMarked: now.Add(-70 * time.Millisecond)}
			if got := c.due(nextWindow(took), now.Add(-60*time.Millisecond), now).now(recs, now); got != tc.want {
				t.Fatalf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

// agedMarker is one pending attachment of a test: its record and its marker's age.
type agedMarker struct {
	container, ifName string
	age               time.Duration
	e                 entry
}

// agedPending saves the records, marks them pending with the given ages and returns
// them as the flusher reads them.
func agedPending(t *testing.T, now time.Time, ms []agedMarker) []*record {
	t.Helper()
	s := &state{dir: t.TempDir()}
	for _, m := range ms {
		r := &record{ContainerID: m.container, IfName: m.ifName, Entries: []entry{m.e}}
		if err := s.save(r); err != nil {
			t.Fatal(err)
		}
		if err := s.markPending(r.ContainerID, r.IfName); err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(s.pendingDir(), filepath.Base(s.path(r.ContainerID, r.IfName)))
		if err := os.Chtimes(marker, now.Add(-m.age), now.Add(-m.age)); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.pendingRecords()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(ms) {
		t.Fatalf("%d pending records, want %d", len(recs), len(ms))
	}
	return recs
}
