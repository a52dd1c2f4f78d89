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
	"testing"
	"time"
)

// A burst of Node events is gathered into one write: the write waits while events keep
// coming, goes once they stop for WriteQuiet, and never waits past WriteInterval from the
// oldest unwritten event.
func TestGatherFor(t *testing.T) {
	r := &Reconciler{WriteInterval: time.Second, WriteQuiet: 100 * time.Millisecond}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	n := &network{}
	if got := r.gatherFor(n, t0); got != 0 {
		t.Fatalf("nothing to write: waited %s", got)
	}
	n.noted(false, t0)
	if got := r.gatherFor(n, t0); got != 0 {
		t.Fatalf("a reconcile without events waited %s", got)
	}
	n.noted(true, at(0))
	if got := r.gatherFor(n, at(0)); got != 100*time.Millisecond {
		t.Fatalf("a lone Node: waited %s, want the quiet time", got)
	}
	if got := r.gatherFor(n, at(100)); got != 0 {
		t.Fatalf("quiet for WriteQuiet: waited %s", got)
	}
	// Events every 50 ms: each pushes the quiet time on, until WriteInterval has passed.
	for ms := 50; ms < 1000; ms += 50 {
		n.noted(true, at(ms))
		if got := r.gatherFor(n, at(ms)); got <= 0 {
			t.Fatalf("at %d ms, amid the burst: wrote at once", ms)
		}
	}
	n.noted(true, at(950))
	if got := r.gatherFor(n, at(960)); got != 40*time.Millisecond {
		t.Fatalf("near WriteInterval: waited %s, want 40ms", got)
	}
	if got := r.gatherFor(n, at(1000)); got != 0 {
		t.Fatalf("WriteInterval after the oldest event: waited %s", got)
	}
	// A write clears the record: the next event starts a new gathering.
	n.unwritten = time.Time{}
	n.noted(true, at(1500))
	if got := r.gatherFor(n, at(1500)); got != 100*time.Millisecond {
		t.Fatalf("after a write: waited %s, want the quiet time", got)
	}
	if n.unwritten != at(1500) {
		t.Fatalf("oldest unwritten event: %s, want %s", n.unwritten, at(1500))
	}
	// The last write took 400 ms and ended at 1400 ms. Amid a burst, the next waits until 4
	// times that after it (3000 ms), past WriteInterval; at the burst's end, once.
	n.lastWrite, n.lastTook = at(1400), 400*time.Millisecond
	for ms := 1600; ms < 3000; ms += 50 {
		n.noted(true, at(ms))
		if got := r.gatherFor(n, at(ms)); got <= 0 || got > 100*time.Millisecond {
			t.Fatalf("at %d ms, amid a burst after a slow write: waited %s, want up to the quiet time", ms, got)
		}
	}
	n.noted(true, at(3000))
	if got := r.gatherFor(n, at(3000)); got != 0 {
		t.Fatalf("amid a burst, spaced out enough: waited %s", got)
	}
	n.lastWrite, n.unwritten = at(3000), time.Time{}
	n.noted(true, at(3100))
	if got := r.gatherFor(n, at(3200)); got != 200*time.Millisecond {
		t.Fatalf("at the burst's end, after a slow write: waited %s, want 200ms", got)
	}
	if got := r.gatherFor(n, at(3400)); got != 0 {
		t.Fatalf("at the burst's end, spaced out enough: waited %s", got)
	}
}
