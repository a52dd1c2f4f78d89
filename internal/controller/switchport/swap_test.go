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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Issue 27, defect 6: swapping two entries' physical ports (the usual fix for a cabling
// mistake) left each SwitchPort holding its old, clean port while it waited for the other's:
// both in PortBusy forever, and a three-way rotation too. They converge now.
var _ = Describe("entries whose physical ports are swapped", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		newLimit(ns, "2, 6-10")
	})

	rotate := func(n int) {
		entries := map[string]networkv1alpha1.PortInfo{}
		for i := range n {
			entries[fmt.Sprintf("e%d", i)] = networkv1alpha1.PortInfo{Name: fmt.Sprintf("port%d", i)}
		}
		f := newSwitch(ns, "leaf", entries)
		for i := range n {
			newConfiguration(ns, fmt.Sprintf("c%d", i), int32(6+i), "")
			Eventually(stateOf(ns, fmt.Sprintf("e%d", i))).Should(Equal(idle))
			Expect(link(k8s, ns, fmt.Sprintf("e%d", i), fmt.Sprintf("c%d", i))).To(Succeed())
		}
		for i := range n {
			Eventually(stateOf(ns, fmt.Sprintf("e%d", i))).Should(Equal(active))
		}
		// Entry i now names the port of entry i+1.
		Eventually(func() error {
			sw := &networkv1alpha1.Switch{}
			if err := k8s.Get(ctx, key(ns, "leaf"), sw); err != nil {
				return err
			}
			for i := range n {
				sw.Spec.Ports[fmt.Sprintf("e%d", i)] = networkv1alpha1.PortInfo{Name: fmt.Sprintf("port%d", (i+1)%n)}
			}
			return k8s.Update(ctx, sw)
		}).Should(Succeed())
		for i := range n {
			e, want := fmt.Sprintf("e%d", i), fmt.Sprintf("port%d", (i+1)%n)
			Eventually(func() string {
				p := port(ns, e)
				return string(p.Status.State) + " on " + p.Status.PortName
			}).Should(Equal("Active on "+want), "entry %s", e)
			Expect(f.Port(want)).To(HaveField("UntaggedVLAN", HaveValue(BeEquivalentTo(6+i))), "port %s carries entry %s's configuration", want, e)
		}
	}

	It("converges when two entries swap their ports", func() { rotate(2) })
	It("converges when three entries rotate their ports", func() { rotate(3) })
})
