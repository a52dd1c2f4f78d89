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
	"context"
	"maps"
	"math/big"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// Claim states of rackwire_ipam_claims.
const (
	claimBound     = "bound"
	claimPending   = "pending"
	claimExhausted = "exhausted"
)

var (
	poolSizeDesc = prometheus.NewDesc("rackwire_ipam_pool_size_addresses",
		"Addresses the IPPool can hand out (exact up to 2^53; an IPv6 /64 is 1.8e19).", []string{"namespace", "pool"}, nil)
	poolUsedDesc = prometheus.NewDesc("rackwire_ipam_pool_used_addresses",
		"Addresses of the IPPool held by an IPAddress, a pre-allocation or an allocation in flight.", []string{"namespace", "pool"}, nil)
	poolFreeDesc = prometheus.NewDesc("rackwire_ipam_pool_free_addresses",
		"Addresses of the IPPool still free.", []string{"namespace", "pool"}, nil)
	claimsDesc = prometheus.NewDesc("rackwire_ipam_claims",
		"Claims of rackwire's IPPools by kind (IPClaim, IPAddressClaim) and state: bound, pending (not yet bound, for any "+
			"reason but exhaustion) or exhausted (the pool had no free address).", []string{"namespace", "pool", "kind", "state"}, nil)

	// allocationSeconds is observed once per claim, when its first bound status is written.
	allocationSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rackwire_ipam_allocation_duration_seconds",
		Help:    "Time from a claim's creation to the write of its bound status, by claim kind.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	}, []string{"kind"})

	// poolMetrics is the one collector of the process: the manager's metrics registry is
	// global, while a test process sets the IPAM area up once per manager it starts.
	poolMetrics = &ipamCollector{}
)

func init() { metrics.Registry.MustRegister(poolMetrics, allocationSeconds) }

// ipamCollector reads pools and claims when Prometheus scrapes, so the figures are never
// stale and a deleted pool or claim leaves no series behind. Pool figures come from the
// allocators (what the next pick sees: a /64 is counted, never enumerated), claims from
// the informer cache.
type ipamCollector struct {
	mu       sync.Mutex
	registry *Registry
	cache    client.Reader
	capi     bool
}

// use points the collector at the allocators and cache of the manager just set up.
func (c *ipamCollector) use(reg *Registry, cache client.Reader, capi bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.registry, c.cache, c.capi = reg, cache, capi
}

func (c *ipamCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolSizeDesc, poolUsedDesc, poolFreeDesc, claimsDesc} {
		ch <- d
	}
}

func (c *ipamCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reg, cache, capi := c.registry, c.cache, c.capi
	c.mu.Unlock()
	if reg == nil {
		return
	}
	for key, counts := range reg.counts() {
		for d, n := range map[*prometheus.Desc]ipalloc.Count{poolSizeDesc: counts.Total, poolUsedDesc: counts.Used, poolFreeDesc: counts.Free} {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, asFloat(n), key.Namespace, key.Name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	states := map[[4]string]int{}
	var m3 ipamv1alpha1.IPClaimList
	if err := cache.List(ctx, &m3); err != nil {
		ctrl.Log.WithName("metrics").Error(err, "listing IPClaims")
		return
	}
	for i := range m3.Items {
		cl := &m3.Items[i]
		states[[4]string{cl.Namespace, cl.Spec.Pool.Name, kindMetal3, claimState(cl.Status.Conditions, ipamv1alpha1.ConditionReady)}]++
	}
	if capi {
		var capiClaims capiipamv1beta2.IPAddressClaimList
		if err := cache.List(ctx, &capiClaims); err != nil {
			ctrl.Log.WithName("metrics").Error(err, "listing IPAddressClaims")
			return
		}
		for i := range capiClaims.Items {
			cl := &capiClaims.Items[i]
			if ours(cl.Spec.PoolRef) {
				states[[4]string{cl.Namespace, cl.Spec.PoolRef.Name, kindCAPI,
					claimState(cl.Status.Conditions, capiipamv1beta2.IPAddressClaimReadyCondition)}]++
			}
		}
	}
	for k, n := range states {
		ch <- prometheus.MustNewConstMetric(claimsDesc, prometheus.GaugeValue, float64(n), k[:]...)
	}
}

// claimState is what a claim's Ready condition says in the words of rackwire_ipam_claims.
func claimState(conds []metav1.Condition, ready string) string {
	c := meta.FindStatusCondition(conds, ready)
	switch {
	case c == nil:
		return claimPending
	case c.Status == metav1.ConditionTrue:
		return claimBound
	case c.Reason == ReasonPoolExhausted:
		return claimExhausted
	}
	return claimPending
}

// asFloat is n as Prometheus carries it: exact up to 2^53, rounded beyond.
func asFloat(n ipalloc.Count) float64 {
	f, _ := new(big.Float).SetInt(n.Big()).Float64()
	return f
}

// allocated holds the claims whose latency was observed: a reconcile reading the cache
// before it shows the bound status writes the same status again, and must not count twice.
// A claim leaves it when it is released.
var allocated sync.Map // types.UID -> struct{}

// observeAllocation records the latency of a claim whose status now says it is bound for
// the first time.
func observeAllocation(kind string, claim client.Object, wasBound bool) {
	if wasBound {
		return
	}
	if _, seen := allocated.LoadOrStore(claim.GetUID(), struct{}{}); !seen {
		allocationSeconds.WithLabelValues(kind).Observe(time.Since(claim.GetCreationTimestamp().Time).Seconds())
	}
}

// forgetAllocation drops a released claim from allocated.
func forgetAllocation(claim client.Object) { allocated.Delete(claim.GetUID()) }

// counts returns the figures of every pool whose allocator is built and valid (the pool
// controller builds one for every pool it reconciles).
func (r *Registry) counts() map[types.NamespacedName]ipalloc.Counts {
	r.mu.Lock()
	states := maps.Clone(r.pools)
	r.mu.Unlock()
	out := make(map[types.NamespacedName]ipalloc.Counts, len(states))
	for key, s := range states {
		s.mu.Lock()
		if s.alloc != nil {
			out[key] = s.alloc.Counts()
		}
		s.mu.Unlock()
	}
	return out
}
