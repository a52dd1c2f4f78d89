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
	"fmt"
	"sync"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/hostlink"
	"github.com/rackwire/rackwire/internal/scheme"
)

// Two hosts whose inspection names one port, reported at the same moment: neither status
// says the port is held yet, so only the take recorded on the SwitchPort keeps the second
// host's configuration off it.
var _ = Describe("two discovered claims on one port at once", Ordered, func() {
	const (
		ns      = "hr-race"
		chassis = "aa:bb:cc:00:02:26"
		rounds  = 8
	)

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "960-990"},
		})).To(Succeed())
		m := metav1.ObjectMeta{Namespace: ns, Name: "leafrace"}
		ports := map[string]networkv1alpha1.PortInfo{}
		for i := 1; i <= rounds; i++ {
			ports[fmt.Sprintf("q%d", i)] = networkv1alpha1.PortInfo{Name: fmt.Sprintf("Ethernet4/%d", i)}
		}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: m, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: m, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.28", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leafrace"}}},
			&networkv1alpha1.Switch{ObjectMeta: m, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leafrace"}, ChassisMAC: chassis,
				Clean:               networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(4000))},
				DiscoveryNamespaces: []string{ns}, Ports: ports}},
			config(ns, "t970", 970), config(ns, "t980", 980),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		for i := 1; i <= rounds; i++ {
			Eventually(portState(ns, fmt.Sprintf("q%d", i))).Should(Equal(networkv1alpha1.StateIdle))
		}
	})

	It("drives the port for one host only; the other is held and told which host holds it", func() {
		wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
		Expect(err).NotTo(HaveOccurred())
		for i := 1; i <= rounds; i++ {
			port, a, b := fmt.Sprintf("q%d", i), fmt.Sprintf("ra%d", i), fmt.Sprintf("rb%d", i)
			macA, macB := fmt.Sprintf("52:54:28:00:0a:%02x", i), fmt.Sprintf("52:54:28:00:0b:%02x", i)
			machine(ns, "m-"+a, a, `[{"configurationRef":{"name":"t970"},"nicHint":{"mac":"`+macA+`"}}]`)
			machine(ns, "m-"+b, b, `[{"configurationRef":{"name":"t980"},"nicHint":{"mac":"`+macB+`"}}]`)
			newHost(ns, a, macA)
			newHost(ns, b, macB)
			consume(ns, a, ns, "m-"+a)
			consume(ns, b, ns, "m-"+b)

			w, err := wc.Watch(ctx, &networkv1alpha1.SwitchPortList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": port})
			Expect(err).NotTo(HaveOccurred())
			var mu sync.Mutex
			seen := map[string]bool{}
			go func() {
				for ev := range w.ResultChan() {
					if p, ok := ev.Object.(*networkv1alpha1.SwitchPort); ok && p.Spec.Configuration != nil {
						mu.Lock()
						seen[p.Spec.Configuration.Name] = true
						mu.Unlock()
					}
				}
			}()

			By(fmt.Sprintf("round %d: both hosts' inspections name %s at once", i, port))
			var wg sync.WaitGroup
			for _, h := range []struct{ name, mac string }{{a, macA}, {b, macB}} {
				wg.Add(1)
				go func() {
					defer GinkgoRecover()
					defer wg.Done()
					setStatus(ns, h.name, metal3v1alpha1.StateProvisioned, lldpNIC(h.mac, chassis, fmt.Sprintf("Ethernet4/%d", i)))
				}()
			}
			wg.Wait()

			// One host gets the port and its tenant's VLAN; the other is held for it.
			var winner, loser string
			Eventually(func() string {
				la, lb := linkOf(ns, a)(), linkOf(ns, b)()
				ha, hb := heldOf(ns, a)(), heldOf(ns, b)()
				switch {
				case la == "tenant 1/1" && len(hb) > 0 && hb[:len(hostlink.ReasonPortTaken)] == hostlink.ReasonPortTaken:
					winner, loser = a, b
				case lb == "tenant 1/1" && len(ha) > 0 && ha[:len(hostlink.ReasonPortTaken)] == hostlink.ReasonPortTaken:
					winner, loser = b, a
				default:
					return la + " | " + lb
				}
				return "settled"
			}).Should(Equal("settled"))
			Expect(heldOf(ns, loser)()).To(ContainSubstring(fmt.Sprintf("SwitchPort %s/%s is held by host %s/%s", ns, port, ns, winner)))
			Expect(pausedBy(ns, loser)()).To(Equal(networkv1alpha1.PausedByRackwire))
			w.Stop()
			mu.Lock()
			Expect(seen).To(HaveLen(1), "round %d: port %s was driven for both hosts (configurations %v); %s holds it", i, port, seen, winner)
			mu.Unlock()
		}
	})
})
