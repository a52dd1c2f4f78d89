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

package hostlink

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/cachemetrics"
)

var (
	waitingDesc = prometheus.NewDesc("rackwire_hostlink_hosts_waiting",
		"Hosts whose ports do not carry what their state needs yet, by the reason of their HostLink's Ready condition "+
			"(PortsMoving, PortFailed, PortTaken, WiringProblem).", []string{"reason"}, nil)
	heldDesc = prometheus.NewDesc("rackwire_hostlink_hosts_held",
		"Hosts rackwire holds (BMO's paused annotation) until their ports are ready, by the reason of the HostLink's "+
			"Held condition (PortsMoving, PortFailed, PortTaken, ConsumerPaused).", []string{"reason"}, nil)

	// linkMetrics is the one collector of the process, pointed at the cache of the manager
	// last set up (a test process sets up several).
	linkMetrics = cachemetrics.New(collectLinks, waitingDesc, heldDesc)
)

func init() { metrics.Registry.MustRegister(linkMetrics) }

// collectLinks reads the HostLinks from the cache when Prometheus scrapes. The reasons
// alerts and dashboards use are always reported, at zero when no host has them.
func collectLinks(ctx context.Context, cache client.Reader, ch chan<- prometheus.Metric) error {
	var links networkv1alpha1.HostLinkList
	if err := cache.List(ctx, &links); err != nil {
		return fmt.Errorf("listing HostLinks: %w", err)
	}
	waiting := map[string]int{ReasonPortsMoving: 0, ReasonPortFailed: 0, ReasonPortTaken: 0, ReasonWiringProblem: 0}
	held := map[string]int{ReasonPortsMoving: 0, ReasonPortFailed: 0, ReasonPortTaken: 0, ReasonConsumerPaused: 0}
	for i := range links.Items {
		conds := links.Items[i].Status.Conditions
		if r := meta.FindStatusCondition(conds, networkv1alpha1.ConditionReady); r != nil && r.Status == metav1.ConditionFalse {
			waiting[r.Reason]++
		}
		if h := meta.FindStatusCondition(conds, ConditionHeld); h != nil && h.Status == metav1.ConditionTrue {
			held[h.Reason]++
		}
	}
	for reason, n := range waiting {
		ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(n), reason)
	}
	for reason, n := range held {
		ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(n), reason)
	}
	return nil
}
