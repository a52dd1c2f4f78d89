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

package ipamclaim

import (
	"context"
	"fmt"
	"slices"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/rackwire/rackwire/internal/cachemetrics"
)

// statePending is the state of a claim of rackwire's that has no condition yet.
const statePending = "Pending"

var (
	claimsDesc = prometheus.NewDesc("rackwire_ipamclaim_claims",
		"IPAMClaims rackwire serves, by state: the reason of their IPsAllocated condition (Allocated, Exhausted, "+
			"NetworkNotFound, InvalidNetworkConfig, AddressTaken), or Pending before the first one.",
		[]string{"namespace", "network", "state"}, nil)

	// claimMetrics is the one collector of the process, pointed at the cache of the manager
	// last set up (a test process sets up several).
	claimMetrics = cachemetrics.New(collectClaims, claimsDesc)

	// restored counts the claims' reservations this controller found missing and put back.
	restored = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackwire_ipamclaim_reservations_restored_total",
		Help: "Reservations of IPAMClaims' addresses found missing (deleted by someone else) and put back by the claim controller, by network_name.",
	}, []string{"network_name"})
)

// ReasonRestored is the Warning Event on a claim whose missing reservation was put back (the
// IP reconciler's Event for the same thing has the same reason).
const ReasonRestored = "ReservationRestored"

func init() { metrics.Registry.MustRegister(claimMetrics, restored) }

// collectClaims reads the IPAMClaims from the cache when Prometheus scrapes. A claim counts
// once rackwire has touched it (its condition or finalizer): claims of networks served by
// another plugin (OVN-Kubernetes) are not rackwire's to report.
func collectClaims(ctx context.Context, cache client.Reader, ch chan<- prometheus.Metric) error {
	var list ipamclaimsv1alpha1.IPAMClaimList
	if err := cache.List(ctx, &list); err != nil {
		return fmt.Errorf("listing IPAMClaims: %w", err)
	}
	states := map[[3]string]int{}
	for i := range list.Items {
		cl := &list.Items[i]
		state := statePending
		if cond := meta.FindStatusCondition(cl.Status.Conditions, ConditionAllocated); cond != nil {
			state = cond.Reason
		} else if !slices.Contains(cl.Finalizers, Finalizer) {
			continue
		}
		states[[3]string{cl.Namespace, cl.Spec.Network, state}]++
	}
	for k, n := range states {
		ch <- prometheus.MustNewConstMetric(claimsDesc, prometheus.GaugeValue, float64(n), k[:]...)
	}
	return nil
}
