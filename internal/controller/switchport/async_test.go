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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// Issue 17: a hung switch costs one timeout and holds no reconcile worker.
var _ = Describe("a switch that does not answer", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		newLimit(ns, "2, 6-10")
	})

	It("holds no worker: another switch's ports go on while its runs never end", func() {
		stuck := newSwitch(ns, "stuck", map[string]networkv1alpha1.PortInfo{
			"s0": {Name: "port0"}, "s1": {Name: "port1"}, "s2": {Name: "port2"}, "s3": {Name: "port3"},
			"s4": {Name: "port4"}, "s5": {Name: "port5"},
		})
		for _, p := range []string{"s0", "s1", "s2", "s3", "s4", "s5"} {
			Eventually(stateOf(ns, p)).Should(Equal(idle))
		}
		newConfiguration(ns, "web", 6, "7-10")
		// More ports than the suite's four workers wait on a run that never ends.
		stuck.Stall()
		DeferCleanup(stuck.Release)
		for _, p := range []string{"s0", "s1", "s2", "s3", "s4", "s5"} {
			Expect(link(k8s, ns, p, "web")).To(Succeed())
		}
		Eventually(func() int { return len(stuck.ApplyCalls()) }).Should(BeNumerically(">", 0))

		healthy := newSwitch(ns, "healthy", map[string]networkv1alpha1.PortInfo{"h0": {Name: "port0"}})
		Eventually(stateOf(ns, "h0"), 30*time.Second).Should(Equal(idle))
		Expect(link(k8s, ns, "h0", "web")).To(Succeed())
		Eventually(stateOf(ns, "h0"), 30*time.Second).Should(Equal(active))
		Expect(healthy.Port("port0")).To(HaveField("VLANs", BeEquivalentTo("7-10")))
		Expect(conditionOf(ns, "s0", networkv1alpha1.ConditionReady)()).To(ContainSubstring("on its way to the switch"))
	})

	It("opens its circuit after failed runs in a row: no run meanwhile, and the Switch says until when", func() {
		f := newSwitch(ns, "down", map[string]networkv1alpha1.PortInfo{"d0": {Name: "port0"}, "d1": {Name: "port1"}})
		f.Fail(switchdriver.ErrUnreachable)
		Eventually(switchReady(ns, "down")).Should(And(HavePrefix("False/CircuitOpen"), ContainSubstring("the next run on the switch starts at")))
		calls := len(f.Calls())
		Consistently(func() int { return len(f.Calls()) }, 2*time.Second).Should(Equal(calls), "no run while the circuit is open")
		Eventually(conditionOf(ns, "d0", switchport.ConditionFailed)).Should(HavePrefix("True/SwitchUnreachable"))

		f.Fail(nil)
		Eventually(stateOf(ns, "d0")).Should(Equal(idle))
		Eventually(stateOf(ns, "d1")).Should(Equal(idle))
		Eventually(switchReady(ns, "down")).Should(HavePrefix("True/Ready"))
	})
})
