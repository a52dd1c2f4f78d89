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

package switchport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
	"github.com/rackwire/rackwire/internal/switchdriver/fake"
)

// One switch's changes meet in one call, the last change of a port wins, and two switches
// are driven independently.
func TestBatcherCoalescesPerSwitch(t *testing.T) {
	reg := fake.NewRegistry()
	a, b := reg.Get("ns", "a"), reg.Get("ns", "b")
	bt := NewBatcher(100*time.Millisecond, 5*time.Second)
	m := driveByHand(t, bt)
	ctx := context.Background()
	keyA, keyB := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		for _, sw := range []struct {
			key types.NamespacedName
			d   switchdriver.Driver
		}{{keyA, a}, {keyB, b}} {
			wg.Go(func() {
				errs <- bt.Apply(ctx, sw.key, sw.d, switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
			})
		}
	}
	m.until(func() bool { return m.pending(keyA) == 20 && m.pending(keyB) == 20 })
	m.step(100*time.Millisecond, keyA, keyB)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []*fake.Switch{a, b} {
		if n := len(f.ApplyCalls()); n != 1 {
			t.Errorf("want 1 apply call, got %d", n)
		}
		if f.Overlapped() {
			t.Error("two calls ran at once on one switch")
		}
	}
}

// A burst that takes several windows to reach the queue, each request within a window of the
// last, meets in one call: the run starts once requests stop coming, not a window after the
// first. A steady stream is cut at MaxWindow, so it still gets runs. The clock is driven by
// hand: twelve requests 60ms apart (seven windows of 100ms), then quiet.
func TestBatcherWaitsForTheBurstToEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  time.Duration
		runs []int // the ports of each run, in order
	}{
		{"burst", time.Minute, []int{12}},
		// Runs are cut at 250ms (requests at 0-240ms), at 600ms (300-540ms, MaxWindow after
		// the second run's window opened at 300ms), and after the quiet (600-660ms).
		{"stream", 250 * time.Millisecond, []int{5, 5, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := fake.NewRegistry()
			f := reg.Get("ns", "a")
			bt := NewBatcher(100*time.Millisecond, 5*time.Second)
			bt.MaxWindow = tc.max
			m := driveByHand(t, bt)
			key := types.NamespacedName{Namespace: "ns", Name: "a"}
			for i := range 12 {
				if i > 0 {
					m.step(60*time.Millisecond, key)
				}
				bt.Submit(fmt.Sprintf("port/ns/p%d", i), key, f, "", applyOp(switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}}))
			}
			m.step(100*time.Millisecond, key)
			var runs []int
			for _, c := range f.ApplyCalls() {
				runs = append(runs, len(c.Changes))
			}
			if !slices.Equal(runs, tc.runs) {
				t.Errorf("%s: runs of %v ports, want %v", tc.name, runs, tc.runs)
			}
		})
	}
}

func TestBatcherReportsPerPortFailure(t *testing.T) {
	reg := fake.NewRegistry()
	f := reg.Get("ns", "a")
	f.FailPort("bad", fmt.Errorf("vlan not allowed"))
	bt := NewBatcher(50*time.Millisecond, 5*time.Second)
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	var wg sync.WaitGroup
	var good, bad error
	wg.Go(func() {
		good = bt.Apply(context.Background(), key, f, switchdriver.Change{Port: "good", Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
	})
	wg.Go(func() {
		bad = bt.Apply(context.Background(), key, f, switchdriver.Change{Port: "bad", Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
	})
	wg.Wait()
	if good != nil || bad == nil {
		t.Fatalf("good=%v bad=%v", good, bad)
	}
}

// A call's limit grows with its batch: a hung switch is given up on after Timeout plus
// PerPort for each port in the call, not after one fixed limit.
func TestBatcherLimitGrowsWithTheBatch(t *testing.T) {
	reg := fake.NewRegistry()
	f := reg.Get("ns", "a")
	bt := NewBatcher(10*time.Millisecond, time.Minute)
	bt.PerPort = time.Minute
	bt.MaxTimeout = time.Hour
	m := driveByHand(t, bt)
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	limitOf := func(ports int) time.Duration {
		for i := range ports {
			bt.Submit(fmt.Sprintf("port/ns/p%d", i), key, f, "", applyOp(switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}}))
		}
		m.step(10*time.Millisecond, key)
		calls := f.ApplyCalls()
		if len(calls) == 0 || len(calls[len(calls)-1].Changes) != ports {
			t.Fatalf("want a call of %d ports, got %+v", ports, calls)
		}
		// The fake reads the limit off the call's deadline, a moment after it was set.
		return calls[len(calls)-1].Limit.Round(time.Minute)
	}
	if got := limitOf(1); got != 2*time.Minute {
		t.Errorf("one port: the call was given %v, want Timeout plus one PerPort (2m)", got)
	}
	if got := limitOf(4); got != 5*time.Minute {
		t.Errorf("four ports: the call was given %v, want Timeout plus four PerPort (5m)", got)
	}
}

// A request joins the forming run of its switch, with that run's driver, only while the run
// has not started and only when the driver was built from the same provider version; a
// request joined is carried by the run like one submitted with a driver of its own.
func TestBatcherJoinsOnlyTheFormingRunOfTheSameProvider(t *testing.T) {
	reg := fake.NewRegistry()
	f := reg.Get("ns", "a")
	sw := types.NamespacedName{Namespace: "ns", Name: "a"}
	bt := NewBatcher(200*time.Millisecond, 5*time.Second)
	m := driveByHand(t, bt)
	ch := func(p string) op {
		return applyOp(switchdriver.Change{Port: p, Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
	}
	if bt.Join("port/ns/p0", sw, "v1", ch("p0")) {
		t.Fatal("joined with no run forming")
	}
	bt.Submit("port/ns/p0", sw, f, "v1", ch("p0"))
	if bt.Join("port/ns/p1", sw, "v2", ch("p1")) {
		t.Fatal("joined a run whose driver was built from another provider version")
	}
	if bt.Join("port/ns/p1", sw, "", ch("p1")) {
		t.Fatal("joined without naming a provider version")
	}
	if !bt.Join("port/ns/p1", sw, "v1", ch("p1")) {
		t.Fatal("did not join the forming run of the same provider version")
	}
	m.step(200*time.Millisecond, sw)
	for _, p := range []string{"p0", "p1"} {
		if _, ok, _ := bt.Take("port/ns/"+p, ch(p)); !ok {
			t.Fatalf("the run did not end the request of %s", p)
		}
	}
	if calls := f.ApplyCalls(); len(calls) != 1 || len(calls[0].Changes) != 2 {
		t.Fatalf("want one apply of both ports, got %+v", calls)
	}
	if bt.Join("port/ns/p2", sw, "v1", ch("p2")) {
		t.Fatal("joined a run that has ended")
	}
}

// A run does not start while a request is announced and not yet made (a link whose reconcile
// lags), an older generation's reconcile does not clear the announcement, and an announcement
// never made good holds runs back for MaxWindow, no longer.
func TestBatcherWaitsForExpectedRequests(t *testing.T) {
	reg := fake.NewRegistry()
	f := reg.Get("ns", "a")
	sw := types.NamespacedName{Namespace: "ns", Name: "a"}
	bt := NewBatcher(100*time.Millisecond, 5*time.Second)
	bt.MaxWindow = time.Second
	m := driveByHand(t, bt)
	ch := func(p string) op {
		return applyOp(switchdriver.Change{Port: p, Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
	}
	taken := func(ports ...string) {
		t.Helper()
		for _, p := range ports {
			if _, ok, _ := bt.Take("port/ns/"+p, ch(p)); !ok {
				t.Fatalf("the run did not end the request of %s", p)
			}
		}
	}
	bt.Expect(sw, "port/ns/p1", 3)
	bt.Submit("port/ns/p0", sw, f, "v1", ch("p0"))
	bt.Arrived("port/ns/p1", 2) // a reconcile of the generation before the link
	m.step(400*time.Millisecond, sw)
	if n := len(f.ApplyCalls()); n != 0 {
		t.Fatalf("%d runs started while a request was expected", n)
	}
	bt.Submit("port/ns/p1", sw, f, "v1", ch("p1"))
	bt.Arrived("port/ns/p1", 3)
	m.step(100*time.Millisecond, sw)
	taken("p0", "p1")
	if calls := f.ApplyCalls(); len(calls) != 1 || len(calls[0].Changes) != 2 {
		t.Fatalf("want one apply of both ports, got %+v", calls)
	}

	bt.Expect(sw, "port/ns/gone", 1)
	bt.Submit("port/ns/p2", sw, f, "v1", ch("p2"))
	m.step(bt.MaxWindow-time.Millisecond, sw)
	if n := len(f.ApplyCalls()); n != 1 {
		t.Fatalf("a run started %v after its request while another was still expected (MaxWindow %v)", bt.MaxWindow-time.Millisecond, bt.MaxWindow)
	}
	m.step(time.Millisecond, sw)
	taken("p2")
}

// Issue 27, defect 9: a call's limit grew by PerPort for every port, read or changed, so a
// hung 500-port switch held its queue for hours per run (and three runs before its breaker
// opened). Reads no longer extend it and MaxTimeout caps it whatever the port count.
func TestBatcherLimitIsBoundedWhateverThePortCount(t *testing.T) {
	reg := fake.NewRegistry()
	f := reg.Get("ns", "a")
	bt := NewBatcher(10*time.Millisecond, 5*time.Minute)
	bt.PerPort = 10 * time.Second
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	var wg sync.WaitGroup
	for i := range 500 {
		wg.Go(func() {
			_ = bt.wait(context.Background(), key, f, readOp(fmt.Sprintf("p%d", i)))
		})
	}
	wg.Wait()
	for i := range 500 {
		wg.Go(func() {
			_ = bt.Apply(context.Background(), key, f, switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
		})
	}
	wg.Wait()
	for _, c := range f.Calls() {
		want := 10 * time.Minute
		if c.Op == "read" {
			want = 5 * time.Minute
		}
		if c.Limit > want {
			t.Errorf("a %s call of %d ports was given %v, want at most %v", c.Op, len(c.Ports)+len(c.Changes), c.Limit.Round(time.Second), want)
		}
	}
}

// byHand drives a Batcher's clock, so that what a test sees does not depend on how fast the
// machine runs it.
type byHand struct {
	t  *testing.T
	bt *Batcher
	fc *clocktesting.FakeClock
}

func driveByHand(t *testing.T, bt *Batcher) byHand {
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	bt.clock = fc
	return byHand{t: t, bt: bt, fc: fc}
}

// step moves the clock on by d and returns once the runners of the switches have acted on
// it: each waits for its clock again, or has drained its queue.
func (m byHand) step(d time.Duration, sws ...types.NamespacedName) {
	m.t.Helper()
	m.until(func() bool { return m.parked(sws...) })
	m.fc.Step(d)
	m.until(func() bool { return m.parked(sws...) })
}

// parked reports whether the runner of each switch waits for a time still ahead on the
// clock, or has drained its queue: one that has been woken, or is driving the switch, is not.
func (m byHand) parked(sws ...types.NamespacedName) bool {
	m.bt.mu.Lock()
	defer m.bt.mu.Unlock()
	for _, sw := range sws {
		if q := m.bt.queues[sw]; q != nil && q.running && !q.wakeAt.After(m.fc.Now()) {
			return false
		}
	}
	return true
}

func (m byHand) pending(sw types.NamespacedName) int {
	m.bt.mu.Lock()
	defer m.bt.mu.Unlock()
	if q := m.bt.queues[sw]; q != nil {
		return len(q.pending)
	}
	return 0
}

// until polls for what the runner goroutines do; the deadline only stops a test that hangs.
func (m byHand) until(cond func() bool) {
	m.t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			m.t.Fatal("the batcher's runners never came to rest")
		}
	}
}

// The breaker counted runs only: a hung switch's every run lasts its whole limit, so it
// held its queue for BreakAfter limits (30 minutes at the defaults) before the circuit
// opened. Now a switch whose runs have failed as a whole for BreakWithin (one Timeout by
// default) opens its circuit, so the first run that hangs to its limit opens it.
func TestBatcherBreakerOpensOnAHungSwitchAfterOneLimit(t *testing.T) {
	f := hungSwitch{}
	bt := NewBatcher(10*time.Millisecond, 100*time.Millisecond)
	bt.BreakBase, bt.BreakMax = time.Hour, time.Hour
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	err := bt.Apply(context.Background(), key, f, switchdriver.Change{Port: "p0", Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
	if !errors.Is(err, switchdriver.ErrTimeout) {
		t.Fatalf("the run on the hung switch ended with %v, want a timeout", err)
	}
	if failed, until := bt.Breaker(key); !until.After(time.Now()) {
		t.Errorf("after one run that hung to its limit (%d failed), the circuit is closed; want it open", failed)
	}
	err = bt.Apply(context.Background(), key, f, switchdriver.Change{Port: "p1", Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
	if !errors.Is(err, ErrCircuitOpen) {
		t.Errorf("a request on the open circuit ended with %v, want ErrCircuitOpen at once", err)
	}
}

// hungSwitch answers nothing, and its runs end as the Ansible driver's end when it stops a
// run at its limit: ErrTimeout for every port.
type hungSwitch struct{}

func (hungSwitch) Apply(ctx context.Context, changes []switchdriver.Change) map[string]error {
	<-ctx.Done()
	out := map[string]error{}
	for _, c := range changes {
		out[c.Port] = fmt.Errorf("%w: %w", switchdriver.ErrTimeout, ctx.Err())
	}
	return out
}

func (hungSwitch) Read(ctx context.Context, _ []string) (map[string]*networkv1alpha1.SwitchPortConfigurationSpec, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("%w: %w", switchdriver.ErrTimeout, ctx.Err())
}
