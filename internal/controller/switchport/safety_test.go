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
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switches"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// Issue 11: what an infra team tried against the switch half, each hole closed.
var _ = Describe("switch ports safe to share", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		newLimit(ns, "2, 6-10, 300")
	})

	updateSwitch := func(name string, edit func(*networkv1alpha1.Switch)) {
		EventuallyWithOffset(1, func() error {
			sw := &networkv1alpha1.Switch{}
			if err := k8s.Get(ctx, key(ns, name), sw); err != nil {
				return err
			}
			edit(sw)
			return k8s.Update(ctx, sw)
		}).Should(Succeed())
	}

	It("drives no physical port for a SwitchPort that no Switch entry names, whatever its labels say", func() {
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		newConfiguration(ns, "web", 6, "7-10")
		calls := len(f.Calls())

		plant := func(name, switchName string) *networkv1alpha1.SwitchPort {
			p := &networkv1alpha1.SwitchPort{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Labels:      map[string]string{switchport.LabelSwitchName: switchName, switchport.LabelSwitchNamespace: ns},
				Annotations: map[string]string{"metal3.io/port-name": "port0"}},
				Spec: networkv1alpha1.SwitchPortSpec{Configuration: &networkv1alpha1.ConfigurationRef{Name: "web"}}}
			Expect(k8s.Create(ctx, p)).To(Succeed())
			return p
		}
		By("labels naming another Switch: no driver, and it says why")
		planted := plant("planted", "ghost")
		Eventually(conditionOf(ns, "planted", networkv1alpha1.ConditionReady)).Should(
			And(HavePrefix("False/NotVouched"), ContainSubstring("no Switch has an entry for SwitchPort "+ns+"/planted")))
		Consistently(stateOf(ns, "planted"), 2*time.Second).Should(Equal(networkv1alpha1.StateNone))
		Expect(k8s.Delete(ctx, planted)).To(Succeed())
		Eventually(func() error { return k8s.Get(ctx, key(ns, "planted"), &networkv1alpha1.SwitchPort{}) }).Should(Satisfy(apierrors.IsNotFound))

		By("labels naming the Switch: it is not the Switch's either, and the Switch retires it without a clean")
		plant("mimic", "leaf")
		Eventually(func() error { return k8s.Get(ctx, key(ns, "mimic"), &networkv1alpha1.SwitchPort{}) }).Should(Satisfy(apierrors.IsNotFound))
		for _, c := range f.Calls()[calls:] {
			Expect(c.Op).To(Equal("read"), "only p0's own drift reads: %+v", c)
		}
		Expect(f.Port("port0")).To(Equal(parked()))
	})

	It("cleans the old physical port before it configures the new one when an entry is renamed", func() {
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p1": {Name: "port1"}})
		newConfiguration(ns, "web", 6, "7-10")
		Eventually(stateOf(ns, "p1")).Should(Equal(idle))
		Expect(link(k8s, ns, "p1", "web")).To(Succeed())
		Eventually(stateOf(ns, "p1")).Should(Equal(active))
		from := len(changesTo(f))

		updateSwitch("leaf", func(sw *networkv1alpha1.Switch) { sw.Spec.Ports["p1"] = networkv1alpha1.PortInfo{Name: "port9"} })
		Eventually(func() string { return port(ns, "p1").Status.PortName }).Should(Equal("port9"))
		Eventually(stateOf(ns, "p1")).Should(Equal(active))
		seq := changesTo(f)[from:]
		clean := slices.Index(seq, "port1:4000/")
		configure := slices.Index(seq, "port9:6/7-10")
		Expect(clean).To(BeNumerically(">=", 0), "port1 was cleaned: %v", seq)
		Expect(configure).To(BeNumerically(">", clean), "port1 is cleaned before port9 is configured: %v", seq)
		Expect(f.Port("port1")).To(Equal(parked()))
		Expect(f.Port("port9")).To(HaveField("VLANs", BeEquivalentTo("7-10")))
	})

	It("moves an entry to another namespace: the old SwitchPort cleans the physical port before the new one takes it", func() {
		tenant := newNamespace()
		newLimit(tenant, "2, 6-10")
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})
		newConfiguration(ns, "web", 6, "7-10")
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		from := len(changesTo(f))

		updateSwitch("leaf", func(sw *networkv1alpha1.Switch) {
			sw.Spec.Ports["p0"] = networkv1alpha1.PortInfo{Name: "port0", Namespace: tenant}
		})
		Eventually(func() error { return k8s.Get(ctx, key(ns, "p0"), &networkv1alpha1.SwitchPort{}) }).Should(Satisfy(apierrors.IsNotFound))
		Eventually(stateOf(tenant, "p0")).Should(Equal(idle))
		Expect(f.Port("port0")).To(Equal(parked()))
		Expect(changesTo(f)[from]).To(Equal("port0:4000/"), "the first change after the move cleans the tenant configuration off")
		Expect(port(tenant, "p0").Status.ConfigurationRef).To(BeNil())
	})

	It("never ends Active on a VLAN that the limit dropped while the run was on the switch", func() {
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		newConfiguration(ns, "v300", 300, "")
		f.Stall()
		Expect(link(k8s, ns, "p0", "v300")).To(Succeed())
		Eventually(func() []string { return changesTo(f) }).Should(ContainElement("port0:300/"), "the run is on the switch")

		By("the limit webhook counts the link being applied")
		shrink := func() error {
			l := &networkv1alpha1.SwitchResourceLimit{}
			if err := k8s.Get(ctx, key(ns, networkv1alpha1.SwitchResourceLimitName), l); err != nil {
				return err
			}
			l.Spec.VLANRange, l.Spec.SharedVLANRange = "2-200", "2-200"
			return k8s.Update(ctx, l)
		}
		Expect(shrink()).To(MatchError(And(ContainSubstring("VLANs 300 are in use or being applied"), ContainSubstring("SwitchPort p0"))))

		By("a shrink the webhook never saw (it is taken out of the apiserver's path)")
		withoutWebhook("vswitchresourcelimit-v1alpha1.metal3.io", func() { Eventually(shrink).Should(Succeed()) })
		f.Release()
		Eventually(conditionOf(ns, "p0", networkv1alpha1.ConditionReady)).Should(
			And(ContainSubstring("VLAN"), ContainSubstring("300"), Or(HavePrefix("False/OutsideLimit"), HavePrefix("False/InvalidConfiguration"))))
		Eventually(onSwitch(f, "port0")).Should(Equal(parked()))
		Consistently(stateOf(ns, "p0"), 3*time.Second).ShouldNot(Equal(active))
		Eventually(eventReasons(ns, "p0")).Should(ContainElement(And(Or(HavePrefix("OutsideLimit"), HavePrefix("InvalidConfiguration")), ContainSubstring("300"))))
	})

	It("cleans an Active port whose Switch entry tightens, naming the VLANs now outside", func() {
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})
		newConfiguration(ns, "web", 6, "7-10")
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		updateSwitch("leaf", func(sw *networkv1alpha1.Switch) {
			sw.Spec.Ports["p0"] = networkv1alpha1.PortInfo{Name: "port0", VLANRange: "6-8"}
		})
		Eventually(onSwitch(f, "port0")).Should(Equal(parked()))
		Eventually(conditionOf(ns, "p0", networkv1alpha1.ConditionReady)).Should(ContainSubstring("VLANs 9-10 are outside"))
		Expect(stateOf(ns, "p0")()).NotTo(Equal(active))
	})

	It("parks clean ports on the provisioning configuration where the infra team says so", func() {
		infra := newNamespace()
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "pxe-leaf-creds"},
			StringData: map[string]string{"username": "u", "password": "p"}})).To(Succeed())
		Expect(k8s.Create(ctx, configuration(infra, "pxe", 3001, ""))).To(Succeed())
		Expect(k8s.Create(ctx, ansibleSwitch(infra, "pxe-leaf"))).To(Succeed())
		sw := switchObj(infra, "pxe-leaf", map[string]networkv1alpha1.PortInfo{
			"h0": {Name: "port0", Namespace: ns, Clean: &networkv1alpha1.CleanPolicy{Mode: networkv1alpha1.CleanProvisioning, ProvisioningConfiguration: "pxe"}},
			"h1": {Name: "port1", Namespace: ns},
		})
		Expect(k8s.Create(ctx, sw)).To(Succeed())
		f := fakes.Get(infra, "pxe-leaf")
		Eventually(stateOf(ns, "h0")).Should(Equal(idle))
		Eventually(stateOf(ns, "h1")).Should(Equal(idle))
		Expect(f.Port("port0")).To(HaveField("UntaggedVLAN", HaveValue(BeEquivalentTo(3001))))
		Expect(f.Port("port1")).To(Equal(parked()))
		Expect(port(ns, "h0").Status.Clean).To(Equal(networkv1alpha1.CleanProvisioning))

		newConfiguration(ns, "web", 6, "7-10")
		Expect(link(k8s, ns, "h0", "web")).To(Succeed())
		Eventually(stateOf(ns, "h0")).Should(Equal(active))
		Expect(link(k8s, ns, "h0", "")).To(Succeed())
		Eventually(stateOf(ns, "h0")).Should(Equal(idle))
		Expect(f.Port("port0")).To(HaveField("UntaggedVLAN", HaveValue(BeEquivalentTo(3001))))

		pxe := &networkv1alpha1.SwitchPortConfiguration{}
		Expect(k8s.Get(ctx, key(infra, "pxe"), pxe)).To(Succeed())
		pxe.Spec.UntaggedVLAN = ptr.To(networkv1alpha1.VLANID(3002))
		Expect(k8s.Update(ctx, pxe)).To(MatchError(ContainSubstring("Switch pxe-leaf (its provisioning configuration)")))
	})

	It("lets a port in Cleaning on an unreachable switch fail visibly, and go when the infra team releases it", func() {
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})
		newConfiguration(ns, "web", 6, "7-10")
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		f.Fail(switchdriver.ErrUnreachable)
		Expect(k8s.Delete(ctx, &networkv1alpha1.Switch{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf"}})).To(Succeed())
		Eventually(conditionOf(ns, "p0", switchport.ConditionFailed)).Should(HavePrefix("True/SwitchUnreachable"))
		Eventually(stateOf(ns, "p0")).Should(Equal(networkv1alpha1.StateCleaning))
		Consistently(stateOf(ns, "p0"), 2*time.Second).Should(Equal(networkv1alpha1.StateCleaning), "an unreachable switch is not a clean port")

		updateSwitch("leaf", func(sw *networkv1alpha1.Switch) {
			metav1.SetMetaDataAnnotation(&sw.ObjectMeta, networkv1alpha1.AnnotationReleaseWithoutCleaning, "true")
		})
		Eventually(func() error { return k8s.Get(ctx, key(ns, "leaf"), &networkv1alpha1.Switch{}) }).Should(Satisfy(apierrors.IsNotFound))
		Expect(k8s.Get(ctx, key(ns, "p0"), &networkv1alpha1.SwitchPort{})).To(Satisfy(apierrors.IsNotFound))
		Eventually(eventReasons(ns, "p0")).Should(ContainElement(HavePrefix("ReleasedWithoutCleaning")))
		f.Fail(nil)
	})

	It("goes on managing its other ports when an entry's namespace is missing, and names it", func() {
		newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{
			"p0":    {Name: "port0"},
			"ghost": {Name: "port1", Namespace: "no-such-namespace"},
		})
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Eventually(func() string {
			sw := &networkv1alpha1.Switch{}
			Expect(k8s.Get(ctx, key(ns, "leaf"), sw)).To(Succeed())
			for _, c := range sw.Status.Conditions {
				if c.Type == switches.ConditionPortsCreated {
					return c.Reason + ": " + c.Message
				}
			}
			return ""
		}).Should(And(HavePrefix("NamespaceUnavailable"), ContainSubstring("ghost (namespace no-such-namespace")))
	})

	It("holds the AnsibleSwitch and its Secret while the Switch needs them, so deleting all together cleans the ports first", func() {
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})
		newConfiguration(ns, "web", 6, "7-10")
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		Eventually(func() []string {
			s := &corev1.Secret{}
			Expect(k8s.Get(ctx, key(ns, "leaf-creds"), s)).To(Succeed())
			return s.Finalizers
		}).Should(ContainElement(switches.InUseFinalizer))
		Eventually(func() []string {
			a := &networkv1alpha1.AnsibleSwitch{}
			Expect(k8s.Get(ctx, key(ns, "leaf"), a)).To(Succeed())
			return a.Finalizers
		}).Should(ContainElement(switches.InUseFinalizer))

		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf-creds"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf"}},
			&networkv1alpha1.Switch{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf"}},
		} {
			Expect(k8s.Delete(ctx, o)).To(Succeed())
		}
		for _, o := range []client.Object{&corev1.Secret{}, &networkv1alpha1.AnsibleSwitch{}, &networkv1alpha1.Switch{}} {
			name := "leaf"
			if _, ok := o.(*corev1.Secret); ok {
				name = "leaf-creds"
			}
			Eventually(func() error { return k8s.Get(ctx, key(ns, name), o) }).Should(Satisfy(apierrors.IsNotFound))
		}
		Expect(f.Port("port0")).To(Equal(parked()), "the port was cleaned with the credentials before they went")
	})

	It("refuses at admission what would let two owners drive one port, or a port reach every VLAN", func() {
		newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port0"}})

		By("a configuration with neither untaggedVLAN nor vlans, naming both")
		aclOnly := &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "acl-only"},
			Spec: networkv1alpha1.SwitchPortConfigurationSpec{ACL: []networkv1alpha1.ACL{{Type: "ipv4", Action: "deny", Protocol: "ALL"}}}}
		Expect(k8s.Create(ctx, aclOnly)).To(MatchError(And(ContainSubstring("spec.untaggedVLAN: Required"), ContainSubstring("spec.vlans: Required"))))

		By("a second AnsibleSwitch on the same device")
		a := &networkv1alpha1.AnsibleSwitch{}
		Expect(k8s.Get(ctx, key(ns, "leaf"), a)).To(Succeed())
		twin := &networkv1alpha1.AnsibleSwitch{ObjectMeta: metav1.ObjectMeta{Namespace: newNamespace(), Name: "twin"}, Spec: a.Spec}
		Expect(k8s.Create(ctx, twin)).To(MatchError(And(ContainSubstring("spec.ip: Duplicate value"), ContainSubstring("AnsibleSwitch "+ns+"/leaf"))))

		By("a second Switch on the same AnsibleSwitch, naming the same SwitchPort")
		second := switchObj(ns, "second", map[string]networkv1alpha1.PortInfo{"p0": {Name: "port5"}})
		second.Spec.Provider.Name = "leaf"
		Expect(k8s.Create(ctx, second)).To(MatchError(And(ContainSubstring("spec.provider.name: Duplicate value"),
			ContainSubstring("spec.ports[p0]: Duplicate value"), ContainSubstring("already named by Switch "+ns+"/leaf"))))

		By("a Switch with no parking VLAN")
		bare := switchObj(ns, "bare", nil)
		bare.Spec.Clean = networkv1alpha1.CleanPolicy{}
		Expect(k8s.Create(ctx, bare)).To(MatchError(ContainSubstring("spec.clean.parkingVLAN: Required value")))

		By("a parking VLAN that a tenant's limit reaches")
		reach := switchObj(ns, "reach", nil)
		reach.Spec.Provider.Name = "elsewhere"
		reach.Spec.Clean.ParkingVLAN = ptr.To(networkv1alpha1.VLANID(7))
		Expect(k8s.Create(ctx, reach)).To(MatchError(ContainSubstring("spec.clean.parkingVLAN: Invalid value: 7: the parking VLAN must be isolated")))
	})

	It("keeps two namespaces' limits apart unless both share the VLANs", func() {
		a, b := newNamespace(), newNamespace()
		limit := func(ns, vlans, shared string) *networkv1alpha1.SwitchResourceLimit {
			return &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
				Spec: networkv1alpha1.SwitchResourceLimitSpec{VLANRange: networkv1alpha1.VLANRange(vlans), SharedVLANRange: networkv1alpha1.VLANRange(shared)}}
		}
		Expect(k8s.Create(ctx, limit(a, "2000-2010", "2005-2010"))).To(Succeed())
		err := k8s.Create(ctx, limit(b, "2008-2020", ""))
		Expect(err).To(MatchError(And(ContainSubstring("spec.vlanRange: Forbidden: VLANs 2008-2010 are also in namespace "+a), ContainSubstring("sharedVLANRange"))))
		Expect(k8s.Create(ctx, limit(b, "2008-2020", "2008-2009"))).To(MatchError(ContainSubstring("VLANs 2010 are also in namespace " + a)))
		Expect(k8s.Create(ctx, limit(b, "2008-2020", "2008-2010"))).To(Succeed())
	})
})

// withoutWebhook runs fn while the named validating webhook is out of the apiserver's path,
// standing for a change the webhook never saw.
func withoutWebhook(name string, fn func()) {
	cfg := &admissionv1.ValidatingWebhookConfiguration{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: "validating-webhook-configuration"}, cfg)).To(Succeed())
	saved := append([]admissionv1.ValidatingWebhook(nil), cfg.Webhooks...)
	cfg.Webhooks = slices.DeleteFunc(cfg.Webhooks, func(w admissionv1.ValidatingWebhook) bool { return strings.HasPrefix(w.Name, name) })
	Expect(k8s.Update(ctx, cfg)).To(Succeed())
	defer func() {
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKey{Name: "validating-webhook-configuration"}, cfg); err != nil {
				return err
			}
			cfg.Webhooks = saved
			return k8s.Update(ctx, cfg)
		}).Should(Succeed())
	}()
	fn()
}
