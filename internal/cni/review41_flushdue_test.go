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
	"testing"
	"time"
)

// Review of b8e2041 (cameAsBurst in flushDue.now, since replaced by spacing the writes of
// large pools only: call.wroteSmall). The writes here are of a pool of 1,000 entries unless
// a test says otherwise.

// TestReview41APodsSecondAttachmentIsNotABurst: TestFlushPacedByThePods's trickle case (a
// pod 100 ms after the last one written, on a pool whose write took 190 ms: the window
// decides, so the write does not land on the next pod's ADD) must not change because the pod
// has two attachments of the network (net1 and net2, marked 3 ms apart), or because a DEL
// (a pod replaced) came beside its ADD. Both are one arrival on the node, not a burst: the
// next pod still comes 100 ms after this one.
func TestReview41APodsSecondAttachmentIsNotABurst(t *testing.T) {
	const took = 190 * time.Millisecond // a write of a pool of 1,000 entries
	add := func(a string) entry { return entry{Pool: "p", Address: a, Pending: true} }
	for _, tc := range []struct {
		name string
		ms   []agedMarker
	}{
		{"one attachment (as TestFlushPacedByThePods)", []agedMarker{
			{"pod1", "net1", 40 * time.Millisecond, add("10.0.0.1")}}},
		{"a pod with two attachments", []agedMarker{
			{"pod1", "net1", 40 * time.Millisecond, add("10.0.0.1")},
			{"pod1", "net2", 37 * time.Millisecond, add("10.0.0.2")}}},
		{"a pod replaced: its DEL beside the next pod's ADD", []agedMarker{
			{"old", "net1", 40 * time.Millisecond, entry{Pool: "p", Address: "10.0.0.9", Releasing: true}},
			{"pod1", "net1", 37 * time.Millisecond, add("10.0.0.1")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			recs := agedPending(t, now, tc.ms)
			// The last write ended 50 ms ago; its newest entry came 100 ms before this pod.
			c := &call{wrote: took, lastMarked: now.Add(-140 * time.Millisecond)}
			if got := c.due(nextWindow(took), now.Add(-50*time.Millisecond), now).now(recs, now); got {
				t.Fatalf("due = %v, want false: the pods come 100 ms apart, closer than a write (190 ms) and the quiet time; the window decides, as for a pod with one attachment", got)
			}
		})
	}
}

// review41Sim runs the flusher's loop (RunFlusher: c.due, flushDue.now, what flushOnce does
// with lastMarked and wrote, a 20 ms sleep when nothing was due) on a simulated clock. Every
// period a pod comes with its attachments marked gap apart; a pool write takes took, during
// which the flusher sees nothing new (it is in flushOnce). It returns the number of writes,
// the share of the time the apiserver spent writing the pool, and the share of the ADDs that
// came while a write was going.
func review41Sim(period, gap, took time.Duration, attachments, pods int) (writes int, busy, hit float64) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type arrival struct {
		at  time.Time
		rec *record
	}
	var arrivals []arrival
	for p := range pods {
		for a := range attachments {
			at := t0.Add(time.Duration(p)*period + time.Duration(a)*gap)
			r := &record{ContainerID: fmt.Sprint("pod", p), IfName: fmt.Sprint("net", a+1),
				Entries: []entry{{Pool: "p", Address: fmt.Sprintf("10.%d.%d.%d", p/250, p%250, a), Pending: true}}, marked: at}
			arrivals = append(arrivals, arrival{at, r})
		}
	}
	end := arrivals[len(arrivals)-1].at.Add(2 * time.Second)
	c := &call{}
	var pending []*record
	var writesAt [][2]time.Time
	var wroteAt time.Time
	window := flushWindow
	next := 0
	for now := t0; now.Before(end); {
		for next < len(arrivals) && !arrivals[next].at.After(now) {
			pending = append(pending, arrivals[next].rec)
			next++
		}
		if len(pending) == 0 || !c.due(window, wroteAt, now).now(pending, now) {
			now = now.Add(20 * time.Millisecond)
			continue
		}
		for _, r := range pending {
			if r.marked.After(c.lastMarked) {
				c.lastMarked = r.marked
			}
		}
		pending = nil
		writesAt = append(writesAt, [2]time.Time{now, now.Add(took)})
		now = now.Add(took)
		c.wrote, wroteAt, window = took, now, nextWindow(took)
	}
	var busyFor time.Duration
	for _, w := range writesAt {
		busyFor += w[1].Sub(w[0])
	}
	hits := 0
	for _, a := range arrivals {
		for _, w := range writesAt {
			if !a.at.Before(w[0]) && a.at.Before(w[1]) {
				hits++
				break
			}
		}
	}
	span := arrivals[len(arrivals)-1].at.Sub(t0)
	return len(writesAt), float64(busyFor) / float64(span), float64(hits) / float64(len(arrivals))
}

// TestReview41ATrickleOfTwoInterfacePodsKeepsItsPace: a trickle of pods every 100 ms on a
// pool of 1,000 entries (a write takes 150 ms), each pod with two attachments of the network
// marked 3 ms apart. A pool write costs the apiserver the whole pool however many entries it
// carries, so the flusher should write such a trickle as often as the same trickle of
// one-attachment pods, and keep the writes apart by their duration (the apiserver writing the
// pool at most about half the time), not write after each pod back to back.
func TestReview41ATrickleOfTwoInterfacePodsKeepsItsPace(t *testing.T) {
	const took, period, pods = 150 * time.Millisecond, 100 * time.Millisecond, 60
	w1, busy1, hit1 := review41Sim(period, 3*time.Millisecond, took, 1, pods)
	w2, busy2, hit2 := review41Sim(period, 3*time.Millisecond, took, 2, pods)
	t.Logf("one attachment a pod:  %d writes, apiserver writing the pool %.0f%% of the time, %.0f%% of the ADDs during a write", w1, 100*busy1, 100*hit1)
	t.Logf("two attachments a pod: %d writes, apiserver writing the pool %.0f%% of the time, %.0f%% of the ADDs during a write", w2, 100*busy2, 100*hit2)
	if w2 > w1 || busy2 > 0.6 {
		t.Fatalf("two attachments a pod: %d writes (%.0f%% of the time writing the pool), against %d (%.0f%%) for the same pods with one: the second attachment, 3 ms after the first, made every pending set a burst and the apart rule never holds",
			w2, 100*busy2, w1, 100*busy1)
	}
}

// TestReview41ABurstsTailOfOneIsWrittenOnceQuiet: the commit's own case (a burst whose write
// of a small pool took 250 ms on a busy node) with a tail of one entry, which came 5 ms after
// the newest of the last write: it is as much the tail of the burst as a tail of two, and is
// written once quiet (b8e2041's rule, which looked for two close marks, let it wait a
// write's duration).
func TestReview41ABurstsTailOfOneIsWrittenOnceQuiet(t *testing.T) {
	const took = 250 * time.Millisecond
	now := time.Now()
	recs := agedPending(t, now, []agedMarker{
		{"c9", "net1", 35 * time.Millisecond, entry{Pool: "p", Address: "10.0.0.9", Pending: true}}})
	// The last write ended 60 ms ago; its newest entry came 5 ms before this one.
	c := &call{wrote: took, wroteSmall: true, lastMarked: now.Add(-40 * time.Millisecond)}
	if got := c.due(nextWindow(took), now.Add(-60*time.Millisecond), now).now(recs, now); !got {
		t.Fatalf("due = %v, want true: the burst's tail of one entry (5 ms after the last write's newest), quiet for 35 ms, waits as a trickle's would", got)
	}
}
