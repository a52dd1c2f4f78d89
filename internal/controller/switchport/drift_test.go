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
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

var _ = Describe("drift reads of one switch", func() {
	It("read every steady port of the switch in one run per interval, however far apart the ports settled", func() {
		ns := newNamespace()
		newLimit(ns, "2, 6-10")
		ports := map[string]networkv1alpha1.PortInfo{}
		var physical []string
		for i := range 6 {
			ports[fmt.Sprintf("d%d", i)] = networkv1alpha1.PortInfo{Name: fmt.Sprintf("swp%d", i)}
			physical = append(physical, fmt.Sprintf("swp%d", i))
		}
		f := newSwitch(ns, "drifty", ports)
		newConfiguration(ns, "web", 6, "7-10")
		for name := range ports {
			Eventually(stateOf(ns, name)).Should(Equal(idle))
		}
		// Two links half a drift interval (the suite's is 2s) apart: each port's own requeue
		// would read them in runs of their own.
		Expect(link(k8s, ns, "d0", "web")).To(Succeed())
		Eventually(stateOf(ns, "d0")).Should(Equal(active))
		time.Sleep(time.Second)
		mark := len(f.Calls())
		Expect(link(k8s, ns, "d1", "web")).To(Succeed())
		Eventually(stateOf(ns, "d1")).Should(Equal(active))
		// A port just changed is read back at once, alone (forgetRead); drift rounds are
		// what follows that read.
		Eventually(func() bool {
			for _, c := range f.Calls()[mark:] {
				if c.Op == "read" && slices.Contains(c.Ports, "swp1") {
					return true
				}
			}
			return false
		}).Should(BeTrue())

		from := len(f.Calls())
		time.Sleep(5 * time.Second)
		var reads [][]string
		for _, c := range f.Calls()[from:] {
			Expect(c.Op).To(Equal("read"), "nothing but drift reads once the ports are steady: %+v", c)
			if len(c.Ports) > 0 {
				reads = append(reads, c.Ports)
			}
		}
		GinkgoWriter.Printf("drift reads over 5s (interval 2s): %v\n", reads)
		Expect(reads).NotTo(BeEmpty())
		Expect(len(reads)).To(BeNumerically("<=", 3), "one read per interval: %v", reads)
		for _, r := range reads {
			Expect(r).To(ConsistOf(physical), "each read takes in every port of the switch")
		}
	})
})
