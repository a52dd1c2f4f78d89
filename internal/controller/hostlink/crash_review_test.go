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
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Review of the crash recovery: the restarted manager must find a port it drove before the
// status said so even when the host has no wiring left at all (re-inspected without LLDP
// while the manager was down), not only when the wiring moved to another port. Left, the
// port keeps the tenant's VLAN and its holder record, which holds off every other host.
var _ = Describe("a manager that crashed before the status, and a host whose wiring is gone since", Ordered, func() {
	const (
		ns, mac, macB = "hr-crash-review", "52:54:31:00:00:01", "52:54:31:00:00:02"
		chassis       = "aa:bb:cc:00:06:26"
	)

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "1300-1320"},
		})).To(Succeed())
		m := metav1.ObjectMeta{Namespace: ns, Name: "leafcrashrev"}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: m, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: m, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.32", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leafcrashrev"}}},
			&networkv1alpha1.Switch{ObjectMeta: m, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leafcrashrev"}, ChassisMAC: chassis,
				Clean:               networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(4000))},
				DiscoveryNamespaces: []string{ns},
				Ports:               map[string]networkv1alpha1.PortInfo{"r1": {Name: "Ethernet7/1"}}}},
			config(ns, "web1310", 1310), config(ns, "web1311", 1311),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(portState(ns, "r1")).Should(Equal(networkv1alpha1.StateIdle))
	})

	It("releases the port, and lets another host take it, once restarted", func() {
		machine(ns, "m1", "h1", `[{"configurationRef":{"name":"web1310"},"nicHint":{"mac":"`+mac+`"}}]`)
		newHost(ns, "h1", mac)
		consume(ns, "h1", ns, "m1")
		setStatus(ns, "h1", metal3v1alpha1.StateProvisioned, lldpNIC(mac, chassis, "Ethernet7/1"))
		Eventually(linkOf(ns, "h1")).Should(Equal("tenant 1/1"))
		Expect(configOf(ns, "r1")()).To(Equal(ns + "/web1310"))

		By("the manager dies after driving r1 and before writing the HostLink's status")
		Expect(stopMgr(60 * time.Second)).To(Succeed())
		restarted := false
		DeferCleanup(func() {
			if !restarted {
				startManager()
			}
		})
		l := &networkv1alpha1.HostLink{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, l)).To(Succeed())
		l.Status = networkv1alpha1.HostLinkStatus{}
		Expect(k8s.Status().Update(ctx, l)).To(Succeed())

		By("while it is down, BMO inspects the host again: no LLDP is reported any more")
		setStatus(ns, "h1", metal3v1alpha1.StateProvisioned, metal3v1alpha1.NIC{Name: "eth0", MAC: mac})

		By("restarted, the manager releases r1, which only its holder record names")
		startManager()
		restarted = true
		Eventually(configOf(ns, "r1")).Should(BeEmpty(), "r1 still carries the host's tenant configuration, and no HostLink status says so")
		Eventually(func() string {
			p := &networkv1alpha1.SwitchPort{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "r1"}, p); err != nil {
				return err.Error()
			}
			return p.Annotations[networkv1alpha1.AnnotationPortHolder]
		}).Should(BeEmpty())
		Eventually(portState(ns, "r1")).Should(Equal(networkv1alpha1.StateIdle))

		By("another host cabled to r1 takes it")
		machine(ns, "m2", "h2", `[{"configurationRef":{"name":"web1311"},"nicHint":{"mac":"`+macB+`"}}]`)
		newHost(ns, "h2", macB)
		consume(ns, "h2", ns, "m2")
		setStatus(ns, "h2", metal3v1alpha1.StateProvisioned, lldpNIC(macB, chassis, "Ethernet7/1"))
		Eventually(linkOf(ns, "h2")).Should(Equal("tenant 1/1"))
		Expect(configOf(ns, "r1")()).To(Equal(ns + "/web1311"))
	})
})
