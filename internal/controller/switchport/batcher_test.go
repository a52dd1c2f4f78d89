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
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

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
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		for _, sw := range []struct {
			key types.NamespacedName
			d   switchdriver.Driver
		}{{types.NamespacedName{Namespace: "ns", Name: "a"}, a}, {types.NamespacedName{Namespace: "ns", Name: "b"}, b}} {
			wg.Go(func() {
				errs <- bt.Apply(ctx, sw.key, sw.d, switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
			})
		}
	}
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
// first. A steady stream is cut at MaxWindow, so it still gets runs.
func TestBatcherWaitsForTheBurstToEnd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		max   time.Duration
		calls func(n int) bool
	}{
		{"burst", time.Minute, func(n int) bool { return n == 1 }},
		{"stream", 250 * time.Millisecond, func(n int) bool { return n >= 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := fake.NewRegistry()
			f := reg.Get("ns", "a")
			bt := NewBatcher(100*time.Millisecond, 5*time.Second)
			bt.MaxWindow = tc.max
			key := types.NamespacedName{Namespace: "ns", Name: "a"}
			var wg sync.WaitGroup
			for i := range 12 {
				wg.Go(func() {
					_ = bt.Apply(context.Background(), key, f, switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
				})
				time.Sleep(60 * time.Millisecond) // the burst spans 720ms, seven windows
			}
			wg.Wait()
			if n := len(f.ApplyCalls()); !tc.calls(n) {
				t.Errorf("%s: %d apply calls", tc.name, n)
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
	f.Hang()
	defer f.Release()
	bt := NewBatcher(10*time.Millisecond, 100*time.Millisecond)
	bt.PerPort = 200 * time.Millisecond
	bt.MaxTimeout = time.Minute
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	limitOf := func(ports int) time.Duration {
		var wg sync.WaitGroup
		start := time.Now()
		for i := range ports {
			wg.Go(func() {
				_ = bt.Apply(context.Background(), key, f, switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	if got := limitOf(1); got < 300*time.Millisecond || got > 2*time.Second {
		t.Errorf("one port: the call ended after %v, want about 300ms", got)
	}
	if got := limitOf(4); got < 900*time.Millisecond || got > 3*time.Second {
		t.Errorf("four ports: the call ended after %v, want about 900ms", got)
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
	deadline := time.Now().Add(5 * time.Second)
	done := map[string]bool{}
	for len(done) < 2 {
		for _, p := range []string{"p0", "p1"} {
			if _, ok, _ := bt.Take("port/ns/"+p, ch(p)); ok {
				done[p] = true
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end both requests: %v", done)
		}
		time.Sleep(10 * time.Millisecond)
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
// never made good holds runs back for at most MaxWindow.
func TestBatcherWaitsForExpectedRequests(t *testing.T) {
	reg := fake.NewRegistry()
	f := reg.Get("ns", "a")
	sw := types.NamespacedName{Namespace: "ns", Name: "a"}
	bt := NewBatcher(100*time.Millisecond, 5*time.Second)
	bt.MaxWindow = time.Second
	ch := func(p string) op {
		return applyOp(switchdriver.Change{Port: p, Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}})
	}
	takeAll := func(ports ...string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		done := map[string]bool{}
		for len(done) < len(ports) {
			for _, p := range ports {
				if _, ok, _ := bt.Take("port/ns/"+p, ch(p)); ok {
					done[p] = true
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the run did not end the requests: %v", done)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	bt.Expect(sw, "port/ns/p1", 3)
	bt.Submit("port/ns/p0", sw, f, "v1", ch("p0"))
	bt.Arrived("port/ns/p1", 2) // a reconcile of the generation before the link
	time.Sleep(400 * time.Millisecond)
	if n := len(f.ApplyCalls()); n != 0 {
		t.Fatalf("%d runs started while a request was expected", n)
	}
	bt.Submit("port/ns/p1", sw, f, "v1", ch("p1"))
	bt.Arrived("port/ns/p1", 3)
	takeAll("p0", "p1")
	if calls := f.ApplyCalls(); len(calls) != 1 || len(calls[0].Changes) != 2 {
		t.Fatalf("want one apply of both ports, got %+v", calls)
	}

	bt.Expect(sw, "port/ns/gone", 1)
	start := time.Now()
	bt.Submit("port/ns/p2", sw, f, "v1", ch("p2"))
	takeAll("p2")
	if took := time.Since(start); took < bt.MaxWindow/2 || took > bt.MaxWindow+2*time.Second {
		t.Fatalf("a request never made held the run for %v (MaxWindow %v)", took, bt.MaxWindow)
	}
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
