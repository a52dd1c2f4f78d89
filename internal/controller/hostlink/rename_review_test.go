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

package hostlink_test

import (
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Review of a host re-created under an old name: the HostLink rackwire made for the old host
// is owned by it, and the garbage collector deletes it some time after the old host is gone.
// A new host of that name must not drive its ports through that HostLink: when the collector
// deletes it, every port it recorded is released, the new host's included.
var _ = Describe("a host re-created under its old name before the old HostLink is collected", Ordered, func() {
	const (
		ns, macA, macB = "hr-rename-review", "52:54:33:00:00:01", "52:54:33:00:00:02"
		chassis        = "aa:bb:cc:00:08:26"
	)

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "1500-1520"},
		})).To(Succeed())
		m := metav1.ObjectMeta{Namespace: ns, Name: "leafrename"}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: m, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: m, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.34", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leafrename"}}},
			&networkv1alpha1.Switch{ObjectMeta: m, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leafrename"}, ChassisMAC: chassis,
				Clean:               networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(4000))},
				DiscoveryNamespaces: []string{ns},
				Ports:               map[string]networkv1alpha1.PortInfo{"n1": {Name: "Ethernet9/1"}}}},
			config(ns, "web1510", 1510), config(ns, "web1511", 1511),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(portState(ns, "n1")).Should(Equal(networkv1alpha1.StateIdle))
	})

	It("leaves the new host's port alone when the collector deletes the old host's HostLink", func() {
		machine(ns, "m1", "h", `[{"configurationRef":{"name":"web1510"},"nicHint":{"mac":"`+macA+`"}}]`)
		newHost(ns, "h", macA)
		consume(ns, "h", ns, "m1")
		setStatus(ns, "h", metal3v1alpha1.StateProvisioned, lldpNIC(macA, chassis, "Ethernet9/1"))
		Eventually(linkOf(ns, "h")).Should(Equal("tenant 1/1"))
		old := &networkv1alpha1.HostLink{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h"}, old)).To(Succeed())
		Expect(old.OwnerReferences).NotTo(BeEmpty())

		By("the host goes; envtest has no garbage collector, so its HostLink stays for now")
		deleteHost(ns, "h")
		Eventually(portState(ns, "n1")).Should(Equal(networkv1alpha1.StateIdle))

		By("a new host of the same name, cabled to the same port, is provisioned for another machine")
		machine(ns, "m2", "h", `[{"configurationRef":{"name":"web1511"},"nicHint":{"mac":"`+macB+`"}}]`)
		newHost(ns, "h", macB)
		consume(ns, "h", ns, "m2")
		setStatus(ns, "h", metal3v1alpha1.StateProvisioned, lldpNIC(macB, chassis, "Ethernet9/1"))
		Eventually(configOf(ns, "n1")).Should(Equal(ns + "/web1511"))
		Eventually(portState(ns, "n1")).Should(Equal(networkv1alpha1.StateActive))
		p := &networkv1alpha1.SwitchPort{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "n1"}, p)).To(Succeed())
		driven := p.Generation

		By("the garbage collector deletes the old host's HostLink")
		// It may be gone already (a conflict on the UID: a newer HostLink has the name).
		if err := k8s.Delete(ctx, old, client.Preconditions{UID: ptr.To(old.UID)}); !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(func() types.UID {
			l := &networkv1alpha1.HostLink{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h"}, l); err != nil {
				return ""
			}
			if l.UID == old.UID || l.Status.ReadyPorts != "1/1" {
				return ""
			}
			return l.UID
		}).ShouldNot(BeEmpty())
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "n1"}, p)).To(Succeed())
		Expect(configOf(ns, "n1")()).To(Equal(ns + "/web1511"))
		// A release by the old HostLink unlinks the port and the new HostLink links it again:
		// its spec changes twice more.
		Expect(p.Generation).To(Equal(driven), "the new host's port was unlinked when the old host's HostLink went")
	})
})
