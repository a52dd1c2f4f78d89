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
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

var _ = Describe("48 ports of one switch linked at once", func() {
	It("reach Active in a few driver runs, never two at once on the switch", func() {
		ns := newNamespace()
		newLimit(ns, "2, 6-10")
		ports := map[string]networkv1alpha1.PortInfo{}
		for i := range 48 {
			ports[fmt.Sprintf("p%02d", i)] = networkv1alpha1.PortInfo{Name: fmt.Sprintf("swp%d", i), VLANRange: "2, 6-10"}
		}
		f := newSwitch(ns, "tor", ports)
		newConfiguration(ns, "web", 6, "7-10")
		for name := range ports {
			Eventually(stateOf(ns, name)).Should(Equal(idle))
		}
		before := len(f.ApplyCalls())

		var wg sync.WaitGroup
		for name := range ports {
			wg.Go(func() {
				defer GinkgoRecover()
				Expect(link(k8s, ns, name, "web")).To(Succeed())
			})
		}
		wg.Wait()
		for name := range ports {
			Eventually(stateOf(ns, name)).Should(Equal(active))
		}

		runs := f.ApplyCalls()[before:]
		changes := 0
		for _, r := range runs {
			changes += len(r.Changes)
		}
		AddReportEntry("driver runs for 48 linked ports", len(runs))
		GinkgoWriter.Printf("48 ports linked at once reached Active in %d driver runs (%d port changes)\n", len(runs), changes)
		Expect(len(runs)).To(BeNumerically("<", 48/4), "batched")
		Expect(f.Overlapped()).To(BeFalse())

		By("one Event per port for the run, Active; none for the tenant's own link")
		for name := range ports {
			Eventually(eventReasons(ns, name)).Should(ContainElement(HavePrefix("Active")))
		}
		for name := range ports {
			Expect(eventReasons(ns, name)()).NotTo(ContainElement(HavePrefix("Configuring")), name)
		}
	})
})
