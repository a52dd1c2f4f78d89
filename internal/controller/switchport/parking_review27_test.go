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
	"k8s.io/utils/ptr"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Review of issue 27: a tagged-only trunk takes its Switch's parking VLAN as its native VLAN
// (Cumulus' pvid, OS10's access VLAN, OS9's untagged hybrid membership, ENOS' native VLAN).
// When the infra team moves the parking VLAN, parked ports are cleaned again onto the new
// one, but an Active trunk keeps the old one: nothing records the parking VLAN a port was
// configured with, so nothing reapplies it. The old parking VLAN is then free for a tenant's
// limit (the limit webhook checks only the parking VLANs Switches name now), and that tenant's
// hosts share a VLAN with the untagged side of every such trunk of other tenants.
var _ = Describe("a Switch whose parking VLAN moves", func() {
	It("gives its Active tagged-only trunks the new parking VLAN as native VLAN", func() {
		ns := newNamespace()
		newLimit(ns, "2, 6-10")
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"e0": {Name: "port0"}})
		newConfiguration(ns, "trunk", 0, "6-7")
		Eventually(stateOf(ns, "e0")).Should(Equal(idle))
		Expect(link(k8s, ns, "e0", "trunk")).To(Succeed())
		Eventually(stateOf(ns, "e0")).Should(Equal(active))

		Eventually(func() error {
			sw := &networkv1alpha1.Switch{}
			if err := k8s.Get(ctx, key(ns, "leaf"), sw); err != nil {
				return err
			}
			sw.Spec.Clean.ParkingVLAN = ptr.To(networkv1alpha1.VLANID(3999))
			return k8s.Update(ctx, sw)
		}).Should(Succeed())
		Eventually(func() bool {
			for _, c := range f.ApplyCalls() {
				for _, ch := range c.Changes {
					if ch.Port == "port0" && ch.Config != nil && ch.Config.VLANs == "6-7" && ch.Parking == 3999 {
						return true
					}
				}
			}
			return false
		}, "20s").Should(BeTrue(), "the trunk was never applied again with the new parking VLAN as its native VLAN")
	})
})
