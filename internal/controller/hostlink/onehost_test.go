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
	"errors"
	"fmt"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/hostlink"
)

// Issue 26: a port serves one host, a host serves only its own tenant, and no host is stuck.
var _ = Describe("one host per port, one tenant per host, no stuck host", Ordered, func() {
	const (
		infra, nsA, nsB, nsLLDP = "hs-infra", "hs-a", "hs-b", "hs-lldp"
		chassis                 = "aa:bb:cc:00:00:26"
	)

	BeforeAll(func() {
		for ns, vlans := range map[string]string{infra: "500-550", nsA: "600-650", nsB: "700-750", nsLLDP: "800-850"} {
			Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
				Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: networkv1alpha1.VLANRange(vlans)},
			})).To(Succeed())
		}
		m := metav1.ObjectMeta{Namespace: infra, Name: "leaf26"}
		ports := map[string]networkv1alpha1.PortInfo{}
		for i := 1; i <= 8; i++ {
			ports[fmt.Sprintf("s%d", i)] = networkv1alpha1.PortInfo{Name: fmt.Sprintf("Ethernet2/%d", i)}
		}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: m, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: m, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.26", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leaf26"}}},
			&networkv1alpha1.Switch{ObjectMeta: m, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leaf26"}, ChassisMAC: chassis,
				Clean: networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(4000))},
				// Discovered wiring is vouched for in the infra team's namespace only.
				DiscoveryNamespaces: []string{infra}, Ports: ports}},
			config(infra, "prov", 500), config(infra, "web520", 520), config(infra, "web530", 530),
			config(nsA, "a620", 620), config(nsB, "b720", 720),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		for i := 1; i <= 8; i++ {
			Eventually(portState(infra, fmt.Sprintf("s%d", i))).Should(Equal(networkv1alpha1.StateIdle))
		}
	})

	It("lets a SwitchPort serve one host: a HostLink entry beats discovered wiring, the first host keeps it, the webhook refuses a second entry", func() {
		const macA, macX, macY, macC, macD = "52:54:26:00:00:0a", "52:54:26:00:00:0b", "52:54:26:00:00:0c", "52:54:26:00:00:0d", "52:54:26:00:00:0e"
		Expect(k8s.Create(ctx, hostLink(infra, "ha", macA, "s1", "prov"))).To(Succeed())
		newHost(infra, "ha", macA)
		Eventually(linkOf(infra, "ha")).Should(Equal("provisioning 1/1"))
		Expect(configOf(infra, "s1")()).To(Equal("hs-infra/prov"))

		By("the webhook refuses a HostLink naming a port another HostLink names, with the field path")
		err := k8s.Create(ctx, hostLink(infra, "hb", macX, "s1", "prov"))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(ContainSubstring("spec.ports[0].port"), ContainSubstring("HostLink hs-infra/ha")))

		By("a host whose LLDP names that port does not get it: the HostLink's entry wins, the wiring is reported unused")
		newHost(infra, "hx", macX)
		setStatus(infra, "hx", metal3v1alpha1.StateAvailable, lldpNIC(macX, chassis, "Ethernet2/1"))
		Eventually(unusedOf(infra, "hx")).Should(ConsistOf(ContainSubstring("s1: HostLink hs-infra/ha names the port")))
		Expect(configOf(infra, "s1")()).To(Equal("hs-infra/prov"))
		Expect(pausedBy(infra, "hx")()).To(BeEmpty())

		By("LLDP of a host in a namespace no Switch allows is seen but not used")
		newHost(nsLLDP, "hy", macY)
		setStatus(nsLLDP, "hy", metal3v1alpha1.StateAvailable, lldpNIC(macY, chassis, "Ethernet2/6"))
		Eventually(unusedOf(nsLLDP, "hy")).Should(ConsistOf(ContainSubstring("s6: the Switch does not allow discovered wiring for hosts of namespace hs-lldp")))
		h := &metal3v1alpha1.BareMetalHost{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: nsLLDP, Name: "hy"}, h)).To(Succeed())
		Expect(h.Finalizers).NotTo(ContainElement(hostlink.Finalizer))
		Expect(configOf(infra, "s6")()).To(Equal(""))

		By("two provisioned hosts whose LLDP names one port: the first keeps it, the second is held, both are told")
		machine(infra, "mc", "hc", `[{"configurationRef":{"name":"web520"},"nicHint":{"mac":"`+macC+`"}}]`)
		machine(infra, "md", "hd", `[{"configurationRef":{"name":"web530"},"nicHint":{"mac":"`+macD+`"}}]`)
		newHost(infra, "hc", macC)
		consume(infra, "hc", infra, "mc")
		setStatus(infra, "hc", metal3v1alpha1.StateProvisioned, lldpNIC(macC, chassis, "Ethernet2/2"))
		Eventually(linkOf(infra, "hc")).Should(Equal("tenant 1/1"))
		Expect(configOf(infra, "s2")()).To(Equal("hs-infra/web520"))

		newHost(infra, "hd", macD)
		consume(infra, "hd", infra, "md")
		setStatus(infra, "hd", metal3v1alpha1.StateProvisioned, lldpNIC(macD, chassis, "Ethernet2/2"))
		Eventually(heldOf(infra, "hd")).Should(And(HavePrefix(hostlink.ReasonPortTaken), ContainSubstring("SwitchPort hs-infra/s2 is held by host hs-infra/hc")))
		Expect(pausedBy(infra, "hd")()).To(Equal(networkv1alpha1.PausedByRackwire))
		Expect(configOf(infra, "s2")()).To(Equal("hs-infra/web520"))
		l := &networkv1alpha1.HostLink{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hd"}, l)).To(Succeed())
		Expect(l.Status.Ports).To(ConsistOf(And(HaveField("SwitchPort.Name", "s2"), HaveField("HeldBy.Name", "hc"), HaveField("Want", BeNil()))))
		Eventually(eventsOf(infra, "hd")).Should(ContainElement(And(HavePrefix(hostlink.ReasonPortTaken), ContainSubstring("hs-infra/s2"), ContainSubstring("hs-infra/hc"))))
		Eventually(eventsOf(infra, "hc")).Should(ContainElement(And(HavePrefix(hostlink.ReasonPortTaken), ContainSubstring("hs-infra/s2"), ContainSubstring("hs-infra/hd"))))

		By("the first host goes: its port is cleaned, and the second host takes it")
		deleteHost(infra, "hc")
		Eventually(linkOf(infra, "hd")).Should(Equal("tenant 1/1"))
		Expect(configOf(infra, "s2")()).To(Equal("hs-infra/web530"))
		Eventually(pausedBy(infra, "hd")).Should(BeEmpty())
	})

	It("gives a host reusing a deleted host's name none of the HostLink's ports unless it has their MACs", func() {
		const macE, macNew = "52:54:26:00:00:1a", "52:54:26:00:00:1b"
		Expect(k8s.Create(ctx, hostLink(infra, "he", macE, "s3", "prov"))).To(Succeed())
		h := newHost(infra, "he", macE)
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))
		Eventually(linkOf(infra, "he")).Should(Equal("provisioning 1/1"))
		Expect(configOf(infra, "s3")()).To(Equal("hs-infra/prov"))
		deleteHost(infra, "he")
		Expect(configOf(infra, "s3")()).To(Equal(""))

		By("a new host of the same name with other MACs: not held, its ports untouched, the HostLink says why")
		h = newHost(infra, "he", macNew)
		Expect(h.Annotations).NotTo(HaveKey(metal3v1alpha1.PausedAnnotation))
		Eventually(readyOf(infra, "he")).Should(And(HavePrefix(hostlink.ReasonWiringProblem), ContainSubstring(string(h.UID)), ContainSubstring("has no NIC with MAC "+macE)))
		Expect(configOf(infra, "s3")()).To(Equal(""))
		Expect(pausedBy(infra, "he")()).To(BeEmpty())
		Expect(linkOf(infra, "he")()).To(Equal("provisioning 0/0"))
	})

	It("applies a consumer's configuration only when the Metal3Machine is in the host's namespace and names the host back", func() {
		const macF = "52:54:26:00:00:2a"
		machine(nsB, "mb", nsA+"/hf", `[{"configurationRef":{"name":"b720"},"nicHint":{"mac":"`+macF+`"}}]`)
		machine(nsA, "ma", "", `[{"configurationRef":{"name":"a620"},"nicHint":{"mac":"`+macF+`"}}]`)
		hl := hostLink(nsA, "hf", macF, "s4", "prov")
		hl.Spec.Ports[0].Port.Namespace = infra
		Expect(k8s.Create(ctx, hl)).To(Succeed())
		newHost(nsA, "hf", macF)
		Eventually(linkOf(nsA, "hf")).Should(Equal("provisioning 1/1"))

		By("a consumerRef to another namespace's Metal3Machine: the port keeps the provisioning configuration")
		consume(nsA, "hf", nsB, "mb")
		setStatus(nsA, "hf", metal3v1alpha1.StateProvisioned)
		Eventually(readyOf(nsA, "hf")).Should(And(HavePrefix(hostlink.ReasonWiringProblem), ContainSubstring("outside the host's namespace hs-a")))
		Expect(configOf(infra, "s4")()).To(Equal("hs-infra/prov"))
		lim := &networkv1alpha1.SwitchResourceLimit{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: nsB, Name: networkv1alpha1.SwitchResourceLimitName}, lim)).To(Succeed())
		Expect(lim.Status.UsedVLANs).To(BeEmpty())

		By("a Metal3Machine of the host's namespace that does not name the host back: still the provisioning configuration")
		consume(nsA, "hf", nsA, "ma")
		Eventually(readyOf(nsA, "hf")).Should(ContainSubstring("does not name this host back"))
		Expect(configOf(infra, "s4")()).To(Equal("hs-infra/prov"))

		By("once it names the host back, as CAPM3 does, the tenant's configuration applies")
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(hostlink.Metal3MachineGVK)
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: nsA, Name: "ma"}, m)).To(Succeed())
		ann := m.GetAnnotations()
		ann[networkv1alpha1.AnnotationConsumerHost] = nsA + "/hf"
		m.SetAnnotations(ann)
		Expect(k8s.Update(ctx, m)).To(Succeed())
		Eventually(configOf(infra, "s4")).Should(Equal("hs-a/a620"))
		Eventually(linkOf(nsA, "hf")).Should(Equal("tenant 1/1"))
	})

	It("lets a deleted host go when its SwitchPort is gone, and after one cleaning attempt when released by annotation", func() {
		const macG, macH = "52:54:26:00:00:3a", "52:54:26:00:00:3b"
		By("a HostLink naming a SwitchPort that does not exist: held while it lives, gone once deleted")
		Expect(k8s.Create(ctx, hostLink(infra, "hh", macH, "nope", "prov"))).To(Succeed())
		newHost(infra, "hh", macH)
		Eventually(heldOf(infra, "hh")).Should(And(HavePrefix(hostlink.ReasonPortFailed), ContainSubstring("hs-infra/nope does not exist")))
		deleteHost(infra, "hh")

		By("a port whose switch fails while the host is deleted: held until the release annotation, then recorded as unknown")
		Expect(k8s.Create(ctx, hostLink(infra, "hg", macG, "s5", "prov"))).To(Succeed())
		newHost(infra, "hg", macG)
		Eventually(linkOf(infra, "hg")).Should(Equal("provisioning 1/1"))
		drivers.Get(infra, "leaf26").FailPort("Ethernet2/5", errors.New("switch unreachable"))
		DeferCleanup(func() { drivers.Get(infra, "leaf26").FailPort("Ethernet2/5", nil) })
		h := &metal3v1alpha1.BareMetalHost{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hg"}, h)).To(Succeed())
		Expect(k8s.Delete(ctx, h)).To(Succeed())
		Eventually(readyOf(infra, "hg")).Should(And(HavePrefix(hostlink.ReasonPortFailed), ContainSubstring("hs-infra/s5")))
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hg"}, h)).To(Succeed())

		l := &networkv1alpha1.HostLink{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hg"}, l)).To(Succeed())
		base := l.DeepCopy()
		l.Annotations = map[string]string{networkv1alpha1.AnnotationReleaseHost: "true"}
		Expect(k8s.Patch(ctx, l, client.MergeFrom(base))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hg"}, &metal3v1alpha1.BareMetalHost{}))
		}).Should(BeTrue())
		Eventually(heldOf(infra, "hg")).Should(And(HavePrefix(hostlink.ReasonReleasedByHand), ContainSubstring("hs-infra/s5"), ContainSubstring("not confirmed clean")))
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hg"}, l)).To(Succeed())
		Expect(l.Status.Unknown).To(ConsistOf(And(HaveField("SwitchPort.Name", "s5"), HaveField("HostUID", h.UID))))

		By("the switch answers again: the port is cleaned")
		drivers.Get(infra, "leaf26").FailPort("Ethernet2/5", nil)
		Eventually(portState(infra, "s5")).Should(Equal(networkv1alpha1.StateIdle))
		Expect(configOf(infra, "s5")()).To(Equal(""))
	})

	It("neither takes nor lifts a hold while the consumer is paused, and keeps the held host's status for the move", func() {
		const macM = "52:54:26:00:00:4a"
		machine(infra, "mm", "hm", `[{"configurationRef":{"name":"web520"},"nicHint":{"mac":"`+macM+`"}}]`)
		Expect(k8s.Create(ctx, hostLink(infra, "hm", macM, "s7", "prov"))).To(Succeed())
		newHost(infra, "hm", macM)
		Eventually(linkOf(infra, "hm")).Should(Equal("provisioning 1/1"))
		Eventually(pausedBy(infra, "hm")).Should(BeEmpty())
		consume(infra, "hm", infra, "mm")
		setStatus(infra, "hm", metal3v1alpha1.StateProvisioned)
		Eventually(linkOf(infra, "hm")).Should(Equal("tenant 1/1"))

		By("the switch fails while the image is taken away: rackwire holds the host")
		drivers.Get(infra, "leaf26").FailPort("Ethernet2/7", errors.New("switch unreachable"))
		DeferCleanup(func() { drivers.Get(infra, "leaf26").FailPort("Ethernet2/7", nil) })
		Eventually(func() error {
			h := &metal3v1alpha1.BareMetalHost{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hm"}, h); err != nil {
				return err
			}
			h.Spec.Image = nil
			return k8s.Update(ctx, h)
		}).Should(Succeed())
		Eventually(heldOf(infra, "hm")).Should(HavePrefix(hostlink.ReasonPortFailed))
		Expect(pausedBy(infra, "hm")()).To(Equal(networkv1alpha1.PausedByRackwire))

		By("clusterctl move pauses the consumer: CAPM3 sees the host already paused, rackwire writes BMO's status annotation")
		setMachineAnnotation(infra, "mm", "cluster.x-k8s.io/paused", "")
		Eventually(heldOf(infra, "hm")).Should(And(HavePrefix(hostlink.ReasonConsumerPaused), ContainSubstring("Metal3Machine hs-infra/mm")))
		h := &metal3v1alpha1.BareMetalHost{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hm"}, h)).To(Succeed())
		Expect(h.Annotations).To(HaveKey(metal3v1alpha1.StatusAnnotation))
		Expect(h.Annotations[metal3v1alpha1.StatusAnnotation]).To(ContainSubstring(`"state":"provisioned"`))

		By("the port heals mid-move: the hold stays until the consumer is unpaused")
		drivers.Get(infra, "leaf26").FailPort("Ethernet2/7", nil)
		Eventually(linkOf(infra, "hm")).Should(Equal("provisioning 1/1"))
		Expect(pausedBy(infra, "hm")()).To(Equal(networkv1alpha1.PausedByRackwire))
		setMachineAnnotation(infra, "mm", "cluster.x-k8s.io/paused", "-")
		Eventually(pausedBy(infra, "hm")).Should(BeEmpty())
	})

	It("holds a host a known switchPort wires from its creation, and refuses changes of a wired host while the webhook is unreachable", func() {
		const macK, macW, macU = "52:54:26:00:00:5a", "52:54:26:00:00:5b", "52:54:26:00:00:5c"
		By("a host whose spec.networkInterfaces names a switchPort of a Switch that allows its namespace: paused and labelled at creation")
		k := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"online": true, "bootMACAddress": macK,
			"bmc": map[string]any{"address": "ipmi://127.0.0.1:6233", "credentialsName": "hk-bmc"},
			"networkInterfaces": []any{map[string]any{"macAddress": macK,
				"switchPort": map[string]any{"switchID": chassis, "portID": "Ethernet2/6"}}},
		}}}
		k.SetGroupVersionKind(metal3v1alpha1.GroupVersion.WithKind("BareMetalHost"))
		k.SetNamespace(infra)
		k.SetName("hk")
		Expect(k8s.Create(ctx, k)).To(Succeed())
		Expect(k.GetAnnotations()).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))
		Expect(k.GetLabels()).To(HaveKeyWithValue(networkv1alpha1.LabelWired, "true"))
		Eventually(pausedBy(infra, "hk")).Should(BeEmpty())

		By("a wired host, provisioned, and a host rackwire does not wire")
		Expect(k8s.Create(ctx, hostLink(infra, "hw", macW, "s8", "prov"))).To(Succeed())
		w := newHost(infra, "hw", macW)
		Expect(w.Labels).To(HaveKeyWithValue(networkv1alpha1.LabelWired, "true"))
		setStatus(infra, "hw", metal3v1alpha1.StateProvisioned)
		Eventually(linkOf(infra, "hw")).Should(Equal("tenant 1/1"))
		Eventually(pausedBy(infra, "hw")).Should(BeEmpty())
		u := newHost(infra, "hu", macU)
		Expect(u.Labels).NotTo(HaveKey(networkv1alpha1.LabelWired))

		By("the manager's webhook server is unreachable")
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "host-webhook-configuration"}, cfg)).To(Succeed())
		saved := cfg.DeepCopy()
		for i := range cfg.Webhooks {
			cfg.Webhooks[i].ClientConfig.URL = ptr.To("https://127.0.0.1:1/mutate-metal3-io-v1alpha1-baremetalhost")
		}
		Expect(k8s.Update(ctx, cfg)).To(Succeed())
		restore := func() {
			cur := &admissionregistrationv1.MutatingWebhookConfiguration{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: "host-webhook-configuration"}, cur)).To(Succeed())
			cur.Webhooks = saved.Webhooks
			Expect(k8s.Update(ctx, cur)).To(Succeed())
		}
		DeferCleanup(restore)
		touch := func(name string, edit func(*metal3v1alpha1.BareMetalHost)) func() error {
			return func() error {
				h := &metal3v1alpha1.BareMetalHost{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: name}, h); err != nil {
					return err
				}
				edit(h)
				return k8s.Update(ctx, h)
			}
		}
		note := func(v string) func(*metal3v1alpha1.BareMetalHost) {
			return func(h *metal3v1alpha1.BareMetalHost) {
				metav1.SetMetaDataAnnotation(&h.ObjectMeta, "example.com/note", v)
			}
		}
		Eventually(touch("hw", note("probe"))).Should(HaveOccurred())

		By("a scale-down of the wired host is refused, and so is removing its label; the other host is untouched by the outage")
		err := touch("hw", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Image = nil })()
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("mwiredbaremetalhost-v1alpha1.rackwire.metal3.io"))
		Expect(touch("hw", func(h *metal3v1alpha1.BareMetalHost) { delete(h.Labels, networkv1alpha1.LabelWired) })()).To(HaveOccurred())
		Expect(touch("hu", note("during the outage"))()).To(Succeed())
		h := &metal3v1alpha1.BareMetalHost{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hw"}, h)).To(Succeed())
		Expect(h.Spec.Image).NotTo(BeNil())

		By("back up: the scale-down is admitted with rackwire's pause in the same write")
		restore()
		Eventually(touch("hw", note("back"))).Should(Succeed())
		Expect(touch("hw", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Image = nil })()).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "hw"}, h)).To(Succeed())
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))
	})
})

func config(ns, name string, vid int) *networkv1alpha1.SwitchPortConfiguration {
	return &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptr.To(networkv1alpha1.VLANID(vid))}}
}

func hostLink(ns, name, mac, port, prov string) *networkv1alpha1.HostLink {
	return &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkv1alpha1.HostLinkSpec{Ports: []networkv1alpha1.HostPort{
			{MAC: mac, Port: networkv1alpha1.ObjectRef{Name: port}, ProvisioningConfiguration: &networkv1alpha1.ObjectRef{Name: prov}},
		}}}
}

func newHost(ns, name, mac string) *metal3v1alpha1.BareMetalHost {
	h := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: metal3v1alpha1.BareMetalHostSpec{Online: true, BootMACAddress: mac, Image: &metal3v1alpha1.Image{URL: "http://x/img"},
			BMC: metal3v1alpha1.BMCDetails{Address: "ipmi://127.0.0.1:6232", CredentialsName: name + "-bmc"}}}
	ExpectWithOffset(1, k8s.Create(ctx, h)).To(Succeed())
	return h
}

func lldpNIC(mac, chassis, port string) metal3v1alpha1.NIC {
	return metal3v1alpha1.NIC{Name: "eth0", MAC: mac, LLDP: &metal3v1alpha1.LLDP{SwitchID: chassis, PortID: port}}
}

// setStatus plays BMO: the host reaches a state, with the NICs inspection reported.
func setStatus(ns, name string, state metal3v1alpha1.ProvisioningState, nics ...metal3v1alpha1.NIC) {
	EventuallyWithOffset(1, func() error {
		h := &metal3v1alpha1.BareMetalHost{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
			return err
		}
		h.Status.OperationalStatus = metal3v1alpha1.OperationalStatusOK
		h.Status.Provisioning.State = state
		h.Status.Provisioning.Image = metal3v1alpha1.Image{URL: "http://x/img"}
		if nics != nil {
			h.Status.HardwareDetails = &metal3v1alpha1.HardwareDetails{NIC: nics}
		}
		return k8s.Status().Update(ctx, h)
	}).Should(Succeed())
}

func consume(ns, name, mns, m string) {
	EventuallyWithOffset(1, func() error {
		h := &metal3v1alpha1.BareMetalHost{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
			return err
		}
		h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: hostlink.Metal3MachineGVK.GroupVersion().String(), Kind: "Metal3Machine", Namespace: mns, Name: m}
		return k8s.Update(ctx, h)
	}).Should(Succeed())
}

// machine is a Metal3Machine; host is the "namespace/name" (or a bare name in ns) CAPM3
// records in its metal3.io/BareMetalHost annotation, none when empty.
func machine(ns, name, host, networks string) {
	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(hostlink.Metal3MachineGVK)
	m.SetNamespace(ns)
	m.SetName(name)
	ann := map[string]string{networkv1alpha1.AnnotationNetworkConfiguration: networks}
	switch {
	case host == "":
	case !strings.Contains(host, "/"):
		ann[networkv1alpha1.AnnotationConsumerHost] = ns + "/" + host
	default:
		ann[networkv1alpha1.AnnotationConsumerHost] = host
	}
	m.SetAnnotations(ann)
	ExpectWithOffset(1, k8s.Create(ctx, m)).To(Succeed())
}

// setMachineAnnotation sets (or, with value "-", removes) an annotation of a Metal3Machine.
func setMachineAnnotation(ns, name, key, value string) {
	EventuallyWithOffset(1, func() error {
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(hostlink.Metal3MachineGVK)
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			return err
		}
		ann := m.GetAnnotations()
		if value == "-" {
			delete(ann, key)
		} else {
			ann[key] = value
		}
		m.SetAnnotations(ann)
		return k8s.Update(ctx, m)
	}).Should(Succeed())
}

func deleteHost(ns, name string) {
	h := &metal3v1alpha1.BareMetalHost{}
	ExpectWithOffset(1, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h)).To(Succeed())
	ExpectWithOffset(1, k8s.Delete(ctx, h)).To(Succeed())
	EventuallyWithOffset(1, func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &metal3v1alpha1.BareMetalHost{}))
	}).Should(BeTrue())
}

func configOf(ns, name string) func() string {
	return func() string {
		p := &networkv1alpha1.SwitchPort{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return err.Error()
		}
		if p.Spec.Configuration == nil {
			return ""
		}
		cns := p.Spec.Configuration.Namespace
		if cns == "" {
			cns = ns
		}
		return cns + "/" + p.Spec.Configuration.Name
	}
}

func pausedBy(ns, name string) func() string {
	return func() string {
		h := &metal3v1alpha1.BareMetalHost{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
			return err.Error()
		}
		return h.Annotations[metal3v1alpha1.PausedAnnotation]
	}
}

func conditionOf(ns, name, typ string) func() string {
	return func() string {
		l := &networkv1alpha1.HostLink{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, l); err != nil {
			return err.Error()
		}
		if c := meta.FindStatusCondition(l.Status.Conditions, typ); c != nil {
			return c.Reason + ": " + c.Message
		}
		return ""
	}
}

func heldOf(ns, name string) func() string { return conditionOf(ns, name, hostlink.ConditionHeld) }

func readyOf(ns, name string) func() string {
	return conditionOf(ns, name, networkv1alpha1.ConditionReady)
}

func unusedOf(ns, name string) func() []string {
	return func() []string {
		l := &networkv1alpha1.HostLink{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, l); err != nil {
			return []string{err.Error()}
		}
		var out []string
		for _, u := range l.Status.Unused {
			out = append(out, u.SwitchPort.Name+": "+u.Reason)
		}
		return out
	}
}

// eventsOf are the Events about a host, as "reason: note".
func eventsOf(ns, name string) func() []string {
	return func() []string {
		list := &eventsv1.EventList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return []string{err.Error()}
		}
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "BareMetalHost" && e.Regarding.Name == name {
				out = append(out, e.Reason+": "+e.Note)
			}
		}
		return out
	}
}
