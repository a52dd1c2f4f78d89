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

package switchport_test

import (
	"net/http/httptest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/promscrape"
)

// The suite's manager runs without a metrics server (controlplane.ManagerOptions); the
// registry it would serve is served here by the same handler, and scraped over HTTP.
var _ = Describe("switch metrics", func() {
	It("count runs by result, their duration and ports, drift repairs, ports by state and Ready switches", func() {
		srv := httptest.NewServer(promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
		DeferCleanup(srv.Close)

		ns := newNamespace()
		newLimit(ns, "2, 6-10")
		sw := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0", VLANRange: "2, 6-10"}})
		Eventually(stateOf(ns, "p0")).Should(Equal(networkv1alpha1.StateIdle))
		newConfiguration(ns, "web", 6, "7-10")
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(networkv1alpha1.StateActive))
		sw.Drift("port0", &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "1"})
		Eventually(eventReasons(ns, "p0")).Should(ContainElement(HavePrefix("Drift")))
		Eventually(stateOf(ns, "p0")).Should(Equal(networkv1alpha1.StateActive))

		sw1 := map[string]string{"namespace": ns, "switch": "leaf"}
		Eventually(func(g Gomega) {
			m, err := promscrape.Scrape(srv.URL)
			g.Expect(err).NotTo(HaveOccurred())

			// Clean at creation, the apply, the drift read, the repair: at least four runs.
			g.Expect(value(g, m, "rackwire_switch_runs_total", with(sw1, "result", "ok"))).To(BeNumerically(">=", 4))
			g.Expect(value(g, m, "rackwire_switch_run_duration_seconds", sw1)).To(BeNumerically(">=", 4))
			g.Expect(value(g, m, "rackwire_switch_run_ports", sw1)).To(BeNumerically(">=", 4))
			g.Expect(value(g, m, "rackwire_switch_drift_repairs_total", sw1)).To(BeEquivalentTo(1))
			g.Expect(value(g, m, "rackwire_switchport_state",
				map[string]string{"namespace": ns, "switchport": "p0", "switch": "leaf", "state": "Active"})).To(BeEquivalentTo(1))
			g.Expect(value(g, m, "rackwire_switch_ready", with(sw1, "reason", "Ready"))).To(BeEquivalentTo(1))
		}).Should(Succeed())
	})
})

func with(labels map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for lk, lv := range labels {
		out[lk] = lv
	}
	return out
}

// value is the one series of name whose labels include labels (promscrape.Sample).
func value(g Gomega, families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	v, err := promscrape.Sample(families, name, labels)
	g.Expect(err).NotTo(HaveOccurred())
	return v
}
