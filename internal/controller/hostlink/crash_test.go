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

// The manager drives a port, then writes the HostLink's status; it may die in between. The
// restarted manager must find the port however the host's wiring changed meanwhile.
var _ = Describe("a manager that crashed between driving a port and writing the status", Ordered, func() {
	const (
		ns, mac = "hr-crash", "52:54:30:00:00:01"
		chassis = "aa:bb:cc:00:04:26"
	)

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "1100-1120"},
		})).To(Succeed())
		m := metav1.ObjectMeta{Namespace: ns, Name: "leafcrash"}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: m, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: m, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.30", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leafcrash"}}},
			&networkv1alpha1.Switch{ObjectMeta: m, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leafcrash"}, ChassisMAC: chassis,
				Clean:               networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(4000))},
				DiscoveryNamespaces: []string{ns},
				Ports:               map[string]networkv1alpha1.PortInfo{"k1": {Name: "Ethernet6/1"}, "k2": {Name: "Ethernet6/2"}}}},
			config(ns, "web1110", 1110),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(portState(ns, "k1")).Should(Equal(networkv1alpha1.StateIdle))
		Eventually(portState(ns, "k2")).Should(Equal(networkv1alpha1.StateIdle))
	})

	It("releases a port driven for a host whose status never said so, once restarted", func() {
		machine(ns, "m1", "h1", `[{"configurationRef":{"name":"web1110"},"nicHint":{"mac":"`+mac+`"}}]`)
		newHost(ns, "h1", mac)
		consume(ns, "h1", ns, "m1")
		setStatus(ns, "h1", metal3v1alpha1.StateProvisioned, lldpNIC(mac, chassis, "Ethernet6/1"))
		Eventually(linkOf(ns, "h1")).Should(Equal("tenant 1/1"))
		Expect(configOf(ns, "k1")()).To(Equal(ns + "/web1110"))

		By("the manager dies after driving k1 and before writing the HostLink's status")
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

		By("while it is down, BMO inspects the host again: it is cabled to k2 now")
		setStatus(ns, "h1", metal3v1alpha1.StateProvisioned, lldpNIC(mac, chassis, "Ethernet6/2"))

		By("restarted, the manager drives k2 and releases k1, which no status named")
		startManager()
		restarted = true
		Eventually(linkOf(ns, "h1")).Should(Equal("tenant 1/1"))
		Expect(configOf(ns, "k2")()).To(Equal(ns + "/web1110"))
		Eventually(configOf(ns, "k1")).Should(BeEmpty(), "k1 still carries the host's tenant configuration, and no HostLink status says so")
		Eventually(portState(ns, "k1")).Should(Equal(networkv1alpha1.StateIdle))
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, l)).To(Succeed())
		Expect(l.Status.Ports).To(ConsistOf(HaveField("SwitchPort.Name", "k2")))
	})
})
