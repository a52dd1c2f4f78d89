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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/cachemetrics"
)

// Results of rackwire_switch_runs_total.
const (
	runOK      = "ok"      // every port's change or read succeeded
	runPartial = "partial" // the switch answered; some ports failed
	runFailed  = "failed"  // the switch did not answer (unreachable, timeout, login refused)
)

var (
	runsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackwire_switch_runs_total",
		Help: "Driver runs (playbook runs) per switch by result: ok, partial (some ports failed) or failed (the switch did not answer).",
	}, []string{"namespace", "switch", "result"})
	runSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rackwire_switch_run_duration_seconds",
		Help:    "Duration of a driver run per switch.",
		Buckets: []float64{.5, 1, 2, 5, 10, 20, 30, 60, 120, 300},
	}, []string{"namespace", "switch"})
	runPorts = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rackwire_switch_run_ports",
		Help:    "Requests (port changes and reads) one driver run carried, per switch.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	}, []string{"namespace", "switch"})
	driftRepairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackwire_switch_drift_repairs_total",
		Help: "Ports found changed on their switch (drift) and sent back to be configured or cleaned again.",
	}, []string{"namespace", "switch"})

	portStateDesc = prometheus.NewDesc("rackwire_switchport_state",
		"1 for the state each SwitchPort is in (None, Idle, Configuring, Active, Cleaning, Deleting).",
		[]string{"namespace", "switchport", "switch", "state"}, nil)
	switchReadyDesc = prometheus.NewDesc("rackwire_switch_ready",
		"1 while the Switch is Ready, else 0; reason is its Ready condition's (ProviderCheckFailed and CircuitOpen: unreachable).",
		[]string{"namespace", "switch", "reason"}, nil)

	// switchMetrics is the one collector of the process, pointed at the cache of the manager
	// last set up (a test process sets up several).
	switchMetrics = cachemetrics.New(collectSwitches, portStateDesc, switchReadyDesc)
)

func init() {
	metrics.Registry.MustRegister(runsTotal, runSeconds, runPorts, driftRepairs, switchMetrics)
}

// timedRun runs one batch through drive and records its figures. Runs refused by an open
// circuit never reach it: they are not runs.
func timedRun(sw types.NamespacedName, requests int, drive func() []result) []result {
	start := time.Now()
	results := drive()
	outcome := runOK
	switch {
	case wholeRunFailed(results):
		outcome = runFailed
	default:
		for _, r := range results {
			if r.err != nil && !errors.Is(r.err, errSuperseded) {
				outcome = runPartial
				break
			}
		}
	}
	runsTotal.WithLabelValues(sw.Namespace, sw.Name, outcome).Inc()
	runSeconds.WithLabelValues(sw.Namespace, sw.Name).Observe(time.Since(start).Seconds())
	runPorts.WithLabelValues(sw.Namespace, sw.Name).Observe(float64(requests))
	return results
}

// countDrift counts an outcome that found the port changed on its switch.
func countDrift(port *networkv1alpha1.SwitchPort, o outcome) {
	if o.reason == ReasonDrift && port.Status.Switch != nil {
		driftRepairs.WithLabelValues(port.Status.Switch.Namespace, port.Status.Switch.Name).Inc()
	}
}

// collectSwitches reads SwitchPorts and Switches from the cache when Prometheus scrapes,
// so a port's state series lasts exactly as long as the state (an alert's `for` measures
// how long a port has been Configuring) and a deleted port leaves none behind.
func collectSwitches(ctx context.Context, cache client.Reader, ch chan<- prometheus.Metric) error {
	var ports networkv1alpha1.SwitchPortList
	if err := cache.List(ctx, &ports); err != nil {
		return fmt.Errorf("listing SwitchPorts: %w", err)
	}
	for i := range ports.Items {
		p := &ports.Items[i]
		state, sw := string(p.Status.State), ""
		if state == "" {
			state = "None"
		}
		if p.Status.Switch != nil {
			sw = p.Status.Switch.Name
		}
		ch <- prometheus.MustNewConstMetric(portStateDesc, prometheus.GaugeValue, 1, p.Namespace, p.Name, sw, state)
	}
	var switches networkv1alpha1.SwitchList
	if err := cache.List(ctx, &switches); err != nil {
		return fmt.Errorf("listing Switches: %w", err)
	}
	for i := range switches.Items {
		s := &switches.Items[i]
		ready, reason := 0.0, "Unknown"
		if cond := meta.FindStatusCondition(s.Status.Conditions, networkv1alpha1.ConditionReady); cond != nil {
			reason = cond.Reason
			if cond.Status == "True" {
				ready = 1
			}
		}
		ch <- prometheus.MustNewConstMetric(switchReadyDesc, prometheus.GaugeValue, ready, s.Namespace, s.Name, reason)
	}
	return nil
}
