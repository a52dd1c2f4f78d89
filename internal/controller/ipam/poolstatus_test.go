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
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

func TestStatusWait(t *testing.T) {
	iv := PoolStatusInterval
	now := time.Date(2026, 1, 1, 12, 0, 10, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	pool := func(generation, observed int64, lastUpdated time.Time, allocations int) *ipamv1alpha1.IPPool {
		p := &ipamv1alpha1.IPPool{}
		p.Generation, p.Status.ObservedGeneration = generation, observed
		if !lastUpdated.IsZero() {
			p.Status.LastUpdated = &metav1.Time{Time: lastUpdated}
		}
		p.Status.Indexes = map[string]string{}
		for i := range allocations {
			p.Status.Indexes[fmt.Sprintf("c-%d", i)] = "10.0.0.1"
		}
		return p
	}
	large := 20 * StatusEntriesPerSecond // written every 20 s while busy
	for _, tc := range []struct {
		name             string
		pool             *ipamv1alpha1.IPPool
		written, changed time.Time
		want             time.Duration
	}{
		{"never written", pool(1, 0, time.Time{}, 0), time.Time{}, now, 0},
		{"spec changed since", pool(2, 1, now, 0), now, now, 0},
		{"quiet, written long ago", pool(1, 1, ago(time.Hour), 10), time.Time{}, ago(2 * iv), 0},
		{"quiet, just written", pool(1, 1, now, 10), now, ago(2 * iv), iv},
		{"busy pool, spacing over", pool(1, 1, ago(time.Hour), 10), time.Time{}, ago(iv / 2), 0},
		{"last change half an interval ago", pool(1, 1, ago(5*time.Second), large), ago(5 * time.Second), ago(iv / 2), iv / 2},
		{"busy small pool, written an interval ago", pool(1, 1, ago(iv), 10), ago(iv), now, 0},
		{"busy large pool waits for a pause", pool(1, 1, ago(5*time.Second), large), ago(5 * time.Second), now, iv},
		{"busy large pool, spacing almost over", pool(1, 1, ago(20*time.Second), large), ago(20*time.Second - iv/4), now, iv / 4},
		{"busy large pool, spacing over", pool(1, 1, ago(time.Minute), large), ago(time.Minute), now, 0},
		{"own write later than lastUpdated's whole second", pool(1, 1, ago(2*time.Second), 10), ago(iv / 10), time.Time{}, iv - iv/10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusWait(tc.pool, tc.written, tc.changed, now); max(got, 0) != tc.want {
				t.Fatalf("statusWait = %s, want %s", got, tc.want)
			}
		})
	}
}

// A pool whose indexes are omitted (IndexesOmitted) is the busiest kind: its status must be
// spaced by the addresses it counts, not rebuilt every interval as an empty one would be.
func TestStatusWaitOfAPoolWithoutIndexes(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 10, 0, time.UTC)
	p := &ipamv1alpha1.IPPool{}
	p.Generation, p.Status.ObservedGeneration = 1, 1
	p.Status.LastUpdated = &metav1.Time{Time: now.Add(-5 * time.Second)}
	p.Status.Usage = &ipamv1alpha1.IPPoolUsage{Used: 50000}
	written := now.Add(-5 * time.Second)
	// Changing now, written 5 s ago: a small pool is rebuilt at once, this one waits
	// for a pause (or for the spacing of 50,000 addresses).
	if got := statusWait(p, written, now, now); got != PoolStatusInterval {
		t.Fatalf("statusWait = %s, want %s", got, PoolStatusInterval)
	}
}

func TestStatusSpacing(t *testing.T) {
	if got := StatusSpacing(0); got != PoolStatusInterval {
		t.Fatalf("StatusSpacing(0) = %s", got)
	}
	if got := StatusSpacing(20000); got != 20000*time.Second/StatusEntriesPerSecond {
		t.Fatalf("StatusSpacing(20000) = %s", got)
	}
}

func TestStatusOnly(t *testing.T) {
	base := &ipamv1alpha1.IPPool{}
	base.Generation, base.Finalizers = 1, []string{PoolFinalizer}
	for _, tc := range []struct {
		name   string
		change func(*ipamv1alpha1.IPPool)
		want   bool
	}{
		{"status", func(p *ipamv1alpha1.IPPool) { p.Status.Indexes = map[string]string{"c": "10.0.0.1"} }, true},
		{"spec", func(p *ipamv1alpha1.IPPool) { p.Generation++ }, false},
		{"deletion", func(p *ipamv1alpha1.IPPool) { now := metav1.Now(); p.DeletionTimestamp = &now }, false},
		{"finalizers", func(p *ipamv1alpha1.IPPool) { p.Finalizers = nil }, false},
		{"labels", func(p *ipamv1alpha1.IPPool) { p.Labels = map[string]string{ClusterNameLabel: "c"} }, false},
		{"annotations", func(p *ipamv1alpha1.IPPool) { p.Annotations = map[string]string{PausedAnnotation: ""} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base.DeepCopy()
			tc.change(n)
			if got := statusOnly(base, n); got != tc.want {
				t.Fatalf("statusOnly = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIndexesBudget(t *testing.T) {
	view := func(n int) poolView {
		v := poolView{allocations: map[string]string{}, total: 1 << 20, used: int64(n), free: 1<<20 - int64(n)}
		for i := range n {
			// CAPM3's claim names: <machine>-<data template>-<network>, about 60 characters.
			v.allocations[fmt.Sprintf("cluster-a-workers-md-0-abcde-fghij-xyz12-provisioning-%06d", i)] = fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255)
		}
		return v
	}
	pool := &ipamv1alpha1.IPPool{}
	pool.Name, pool.Namespace = "big", "ns"

	setIPPoolStatus(pool, view(1000))
	if len(pool.Status.Indexes) != 1000 || meta.FindStatusCondition(pool.Status.Conditions, ConditionIndexesOmitted) != nil {
		t.Fatalf("1,000 claims: %d indexes, conditions %v", len(pool.Status.Indexes), pool.Status.Conditions)
	}
	setIPPoolStatus(pool, view(25000))
	c := meta.FindStatusCondition(pool.Status.Conditions, ConditionIndexesOmitted)
	if pool.Status.Indexes != nil || c == nil || !strings.Contains(c.Message, "-l ipam.metal3.io/ippool=big") {
		t.Fatalf("25,000 claims: %d indexes, condition %v", len(pool.Status.Indexes), c)
	}
	if pool.Status.Usage.Used != 25000 {
		t.Fatalf("counts not kept current: %+v", pool.Status.Usage)
	}
	if data, _ := json.Marshal(pool); len(data) > IndexesBudget {
		t.Fatalf("the pool is %d bytes", len(data))
	}
	setIPPoolStatus(pool, view(10))
	if len(pool.Status.Indexes) != 10 || meta.FindStatusCondition(pool.Status.Conditions, ConditionIndexesOmitted) != nil {
		t.Fatalf("back to 10 claims: %d indexes, conditions %v", len(pool.Status.Indexes), pool.Status.Conditions)
	}
}
