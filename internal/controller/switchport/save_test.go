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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
)

// Issue 27, defect 4: a switch whose login may configure but not save failed every run, so
// the port stayed Configuring forever while the switch ran the change. Now the port is
// Active with Ready false and Failed True/NotSaved, and the save is retried until it lands.
var _ = Describe("a switch that runs a change but does not save it", func() {
	It("leaves the port Active, saying NotSaved, and retries the save until it lands", func() {
		ns := newNamespace()
		newLimit(ns, "2, 6-10")
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})
		newConfiguration(ns, "web", 6, "7-10")
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		f.RefuseSave(true)
		DeferCleanup(f.RefuseSave, false)
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(conditionOf(ns, "p0", switchport.ConditionFailed)).Should(HavePrefix("True/NotSaved"))
		Expect(stateOf(ns, "p0")()).To(Equal(active))
		Expect(conditionOf(ns, "p0", networkv1alpha1.ConditionReady)()).To(HavePrefix("False/NotSaved"))
		before := len(f.ApplyCalls())
		Eventually(func() int { return len(f.ApplyCalls()) }).Should(BeNumerically(">", before), "the save is retried")
		f.RefuseSave(false)
		Eventually(conditionOf(ns, "p0", networkv1alpha1.ConditionReady)).Should(HavePrefix("True/Active"))
		Expect(conditionOf(ns, "p0", switchport.ConditionFailed)()).To(HavePrefix("False/"))
		Expect(stateOf(ns, "p0")()).To(Equal(active))
	})
})

// A clean whose save failed was recorded clean and the port went Idle, while a reboot of the
// switch would load the tenant's configuration again on a port nobody holds. Now the port
// stays Cleaning, saying NotSaved, and the clean is retried until its save lands.
var _ = Describe("a switch that runs a clean but does not save it", func() {
	It("keeps the port Cleaning, saying NotSaved, and retries the clean until it is saved", func() {
		ns := newNamespace()
		newLimit(ns, "2, 6-10")
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})
		newConfiguration(ns, "web", 6, "7-10")
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(conditionOf(ns, "p0", networkv1alpha1.ConditionReady)).Should(HavePrefix("True/Active"))
		f.RefuseSave(true)
		DeferCleanup(f.RefuseSave, false)
		Expect(link(k8s, ns, "p0", "")).To(Succeed())
		Eventually(conditionOf(ns, "p0", switchport.ConditionFailed)).Should(HavePrefix("True/NotSaved"))
		before := len(f.ApplyCalls())
		Eventually(func() int { return len(f.ApplyCalls()) }).Should(BeNumerically(">", before), "the clean is retried")
		Expect(stateOf(ns, "p0")()).To(Equal(networkv1alpha1.StateCleaning), "not clean until saved")
		f.RefuseSave(false)
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(conditionOf(ns, "p0", switchport.ConditionFailed)()).To(HavePrefix("False/"))
	})
})
