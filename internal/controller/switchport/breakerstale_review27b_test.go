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
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
	"github.com/rackwire/rackwire/internal/switchdriver/fake"
)

// The breaker's time bound measured from the start of the first failed run of a streak to
// the end of the latest, idle time included: two quick, isolated failures of a switch (a
// drift read during a reboot, another one much later) opened its circuit, though the two
// runs held its queue for a moment. The bound is about how long failing runs hold the
// queue: time with no run on the switch must not count.
func TestBreakerTimeBoundCountsRunsNotIdleTime(t *testing.T) {
	reg := fake.NewRegistry()
	f := reg.Get("ns", "a")
	f.Fail(fmt.Errorf("%w: connection refused", switchdriver.ErrUnreachable))
	bt := NewBatcher(50*time.Millisecond, time.Minute)
	bt.BreakBase, bt.BreakMax = time.Hour, time.Hour
	m := driveByHand(t, bt)
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	fail := func(port string) {
		t.Helper()
		runs := len(f.ApplyCalls())
		bt.Submit("port/ns/"+port, key, f, "", applyOp(switchdriver.Change{Port: port, Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}}))
		m.step(100*time.Millisecond, key)
		m.until(func() bool { return len(f.ApplyCalls()) > runs && m.pending(key) == 0 })
	}
	fail("p0")
	// An hour with nothing to do on the switch.
	m.step(time.Hour, key)
	before := len(f.ApplyCalls())
	fail("p1")
	if n := len(f.ApplyCalls()); n != before+1 {
		t.Fatalf("%d runs after the hour, want 1", n-before)
	}
	if failed, until := bt.Breaker(key); until.After(m.fc.Now()) {
		t.Errorf("two quick failed runs an hour apart (%d failed) opened the circuit until %v; want it closed (BreakAfter %d)", failed, until, bt.BreakAfter)
	}
}
