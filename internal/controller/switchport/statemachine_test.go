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
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/switchdriver/fake"
)

const (
	idle        = networkv1alpha1.StateIdle
	configuring = networkv1alpha1.StateConfiguring
	active      = networkv1alpha1.StateActive
)

var _ = Describe("the SwitchPort state machine", func() {
	var (
		ns string
		sw *fake.Switch
	)
	BeforeEach(func() {
		ns = newNamespace()
		newLimit(ns, "2, 6-10")
		sw = newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{
			"p0": {Name: "port0", VLANRange: "2, 6-10"},
		})
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
	})

	usedVLANs := func() string {
		l := &networkv1alpha1.SwitchResourceLimit{}
		Expect(k8s.Get(ctx, key(ns, networkv1alpha1.SwitchResourceLimitName), l)).To(Succeed())
		return l.Status.UsedVLANs
	}
	applied := func() *networkv1alpha1.SwitchPortConfigurationSpec { return port(ns, "p0").Status.Configuration }

	It("creates the port None -> Cleaning -> Idle, parked on the switch, owned by the Switch", func() {
		p := port(ns, "p0")
		Expect(sw.Port("port0")).To(Equal(parked()), "Idle means clean on the switch, never the device's default")
		Expect(p.Status.Clean).To(Equal(networkv1alpha1.CleanDeconfigured))
		Expect(p.Status.PortName).To(Equal("port0"))
		Expect(p.Status.Switch).To(Equal(&networkv1alpha1.SwitchRef{Namespace: ns, Name: "leaf"}))
		Expect(p.OwnerReferences).To(HaveLen(1))
		Expect(p.OwnerReferences[0].Name).To(Equal("leaf"))
		Expect(p.Labels).To(HaveKeyWithValue(switchport.LabelSwitchName, "leaf"))
		Expect(p.Finalizers).To(ContainElement(switchport.Finalizer))
		Expect(conditionOf(ns, "p0", networkv1alpha1.ConditionReady)()).To(HavePrefix("True/Idle"))
		Eventually(switchReady(ns, "leaf")).Should(HavePrefix("True/Ready"))
	})

	It("goes Idle -> Configuring -> Active, refuses an edit of the linked configuration, reconfigures in place on a relink, and cleans on unlink", func() {
		c := newConfiguration(ns, "web", 6, "7-10")
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		Expect(equality.Semantic.DeepEqual(sw.Port("port0"), &c.Spec)).To(BeTrue())
		Expect(equality.Semantic.DeepEqual(applied(), &c.Spec)).To(BeTrue())
		Expect(conditionOf(ns, "p0", switchport.ConditionConfigured)()).To(HavePrefix("True/Active"))
		Eventually(usedVLANs).Should(Equal("6-10"))
		Eventually(eventReasons(ns, "p0")).Should(ContainElement(HavePrefix("Active")))

		By("editing the linked configuration: refused, it is immutable while linked")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		c.Spec.VLANs = "7-8"
		Expect(k8s.Update(ctx, c)).To(MatchError(And(ContainSubstring("spec: Forbidden"), ContainSubstring("SwitchPort p0"),
			ContainSubstring("create a new SwitchPortConfiguration and link it"))))
		cleaned := cleans(sw, "port0")

		By("linking another configuration: reconfigured in place too")
		newConfiguration(ns, "db", 2, "")
		Expect(link(k8s, ns, "p0", "db")).To(Succeed())
		Eventually(func() string {
			ref := port(ns, "p0").Status.ConfigurationRef
			if ref == nil {
				return ""
			}
			return ref.Name
		}).Should(Equal("db"))
		Eventually(onSwitch(sw, "port0")).Should(HaveField("UntaggedVLAN", HaveValue(BeEquivalentTo(2))))
		Expect(stateOf(ns, "p0")()).To(Equal(active))
		Expect(cleans(sw, "port0")).To(Equal(cleaned), "relinking passes through no clean state")

		By("unlinking: Active -> Cleaning -> Idle, parked")
		Expect(link(k8s, ns, "p0", "")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(sw.Port("port0")).To(Equal(parked()))
		Expect(applied()).To(Equal(parked()))
		Expect(port(ns, "p0").Status.ConfigurationRef).To(BeNil())
		Expect(cleans(sw, "port0")).To(Equal(cleaned + 1))
		Eventually(usedVLANs).Should(BeEmpty())
		Eventually(eventReasons(ns, "p0")).Should(ContainElement(HavePrefix("Cleaning")))
	})

	It("retries a failed apply with backoff, says what failed where each reader may see it, and never claims Active meanwhile", func() {
		newConfiguration(ns, "web", 6, "7-10")
		sw.Fail(errors.New("ssh admin@10.9.0.1: the switch said no"))
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(conditionOf(ns, "p0", switchport.ConditionConfigured)).Should(
			And(HavePrefix("False/ApplyFailed"), ContainSubstring("the switch run failed"), ContainSubstring("Switch "+ns+"/leaf")))
		Eventually(conditionOf(ns, "p0", switchport.ConditionFailed)).Should(HavePrefix("True/ApplyFailed"))
		Expect(conditionOf(ns, "p0", networkv1alpha1.ConditionReady)()).NotTo(ContainSubstring("admin@10.9.0.1"))
		Eventually(eventReasons(ns, "leaf")).Should(ContainElement(ContainSubstring("ssh admin@10.9.0.1: the switch said no")), "the full text is the infra team's")
		Expect(eventReasons(ns, "p0")()).NotTo(ContainElement(ContainSubstring("admin@")))
		Consistently(stateOf(ns, "p0"), 3*time.Second).Should(Equal(configuring))
		Expect(len(sw.ApplyCalls())).To(BeNumerically(">=", 2), "retried")

		sw.Fail(nil)
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		Expect(conditionOf(ns, "p0", networkv1alpha1.ConditionReady)()).To(HavePrefix("True/Active"))
	})

	It("gives up on a hanging switch after the driver timeout and retries", func() {
		newConfiguration(ns, "web", 6, "7-10")
		sw.Hang()
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(conditionOf(ns, "p0", switchport.ConditionConfigured)).Should(
			And(HavePrefix("False/ApplyFailed"), ContainSubstring("did not answer")))
		Expect(stateOf(ns, "p0")()).To(Equal(configuring))
		sw.Release()
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
	})

	It("reads Active ports back and reapplies on drift, reporting it", func() {
		c := newConfiguration(ns, "web", 6, "7-10")
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		sw.Drift("port0", &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "1"})
		Eventually(eventReasons(ns, "p0")).Should(ContainElement(HavePrefix("Drift")))
		Eventually(func() bool { return equality.Semantic.DeepEqual(sw.Port("port0"), &c.Spec) }).Should(BeTrue())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
	})

	It("stays Configuring with DriverUnavailable when no driver is built in, and a provider change reaches the port", func() {
		a := &networkv1alpha1.AnsibleSwitch{}
		Expect(k8s.Get(ctx, key(ns, "leaf"), a)).To(Succeed())
		a.Labels = map[string]string{labelUnavailable: "yes"}
		Expect(k8s.Update(ctx, a)).To(Succeed())
		newConfiguration(ns, "web", 6, "7-10")
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(conditionOf(ns, "p0", switchport.ConditionConfigured)).Should(HavePrefix("False/DriverUnavailable"))
		Consistently(stateOf(ns, "p0"), 2*time.Second).Should(Equal(configuring))
		Expect(sw.Port("port0")).To(Equal(parked()))

		Expect(k8s.Get(ctx, key(ns, "leaf"), a)).To(Succeed())
		a.Labels = nil
		Expect(k8s.Update(ctx, a)).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
	})
})

var _ = Describe("the Switch reconciler", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		newLimit(ns, "2, 6-10")
	})

	It("reports a missing provider, missing credentials and a failed check on Ready", func() {
		Expect(k8s.Create(ctx, switchObj(ns, "spine", map[string]networkv1alpha1.PortInfo{"s0": {Name: "e1"}}))).To(Succeed())
		Eventually(switchReady(ns, "spine")).Should(HavePrefix("False/ProviderNotFound"))
		Eventually(stateOf(ns, "s0")).Should(Equal(networkv1alpha1.StateCleaning), "ports exist before the provider does, not yet clean")
		Eventually(conditionOf(ns, "s0", networkv1alpha1.ConditionReady)).Should(HavePrefix("False/ProviderNotFound"))

		Expect(k8s.Create(ctx, ansibleSwitch(ns, "spine"))).To(Succeed())
		Eventually(switchReady(ns, "spine")).Should(HavePrefix("False/CredentialsNotFound"))

		f := fakes.Get(ns, "spine")
		f.Fail(errors.New("host unreachable"))
		Expect(k8s.Create(ctx, corev1Secret{ns: ns, name: "spine-creds"}.obj())).To(Succeed())
		Eventually(switchReady(ns, "spine")).Should(And(HavePrefix("False/ProviderCheckFailed"), ContainSubstring("host unreachable")))

		f.Fail(nil)
		// The operator writes the Switch too (finalizer, status): retry on a conflict.
		Eventually(func() error {
			sw := &networkv1alpha1.Switch{}
			if err := k8s.Get(ctx, key(ns, "spine"), sw); err != nil {
				return err
			}
			sw.Spec.Ports["s1"] = networkv1alpha1.PortInfo{Name: "e2"}
			return k8s.Update(ctx, sw)
		}).Should(Succeed())
		Eventually(switchReady(ns, "spine")).Should(HavePrefix("True/Ready"))
		Eventually(stateOf(ns, "s1")).Should(Equal(idle))
	})

	It("retires a removed port through Cleaning, never yanking its configuration", func() {
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{
			"p0": {Name: "port0", VLANRange: "2, 6-10"}, "p1": {Name: "port1"},
		})
		newConfiguration(ns, "web", 6, "7-10")
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		before := cleans(f, "port0")

		sw := &networkv1alpha1.Switch{}
		Expect(k8s.Get(ctx, key(ns, "leaf"), sw)).To(Succeed())
		delete(sw.Spec.Ports, "p0")
		Expect(k8s.Update(ctx, sw)).To(Succeed())
		Eventually(func() error { return k8s.Get(ctx, key(ns, "p0"), &networkv1alpha1.SwitchPort{}) }).Should(Satisfy(apierrors.IsNotFound))
		Expect(f.Port("port0")).To(Equal(parked()))
		Expect(cleans(f, "port0")).To(BeNumerically(">", before), "cleaned before it went")
		Expect(stateOf(ns, "p1")()).To(Equal(idle))
	})

	It("on deletion cleans every port, in its own and in tenant namespaces, before it goes", func() {
		tenant := newNamespace()
		newLimit(tenant, "100-200")
		f := newSwitch(ns, "leaf", map[string]networkv1alpha1.PortInfo{
			"p0": {Name: "port0", VLANRange: "2, 6-10"},
			"t0": {Name: "port7", Namespace: tenant},
		})
		newConfiguration(ns, "web", 6, "7-10")
		newConfiguration(tenant, "tenant-web", 150, "100-110")
		Eventually(stateOf(tenant, "t0")).Should(Equal(idle))
		t0 := port(tenant, "t0")
		Expect(t0.OwnerReferences).To(BeEmpty(), "owner references cannot cross namespaces")
		Expect(t0.Labels).To(HaveKeyWithValue(switchport.LabelSwitchNamespace, ns))
		Eventually(stateOf(ns, "p0")).Should(Equal(idle))
		Expect(link(k8s, ns, "p0", "web")).To(Succeed())
		Expect(link(k8s, tenant, "t0", "tenant-web")).To(Succeed())
		Eventually(stateOf(ns, "p0")).Should(Equal(active))
		Eventually(stateOf(tenant, "t0")).Should(Equal(active))

		Expect(k8s.Delete(ctx, &networkv1alpha1.Switch{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf"}})).To(Succeed())
		Eventually(func() error { return k8s.Get(ctx, key(ns, "leaf"), &networkv1alpha1.Switch{}) }).Should(Satisfy(apierrors.IsNotFound))
		Expect(k8s.Get(ctx, key(ns, "p0"), &networkv1alpha1.SwitchPort{})).To(Satisfy(apierrors.IsNotFound))
		Expect(k8s.Get(ctx, key(tenant, "t0"), &networkv1alpha1.SwitchPort{})).To(Satisfy(apierrors.IsNotFound))
		Expect(f.Port("port0")).To(Equal(parked()))
		Expect(f.Port("port7")).To(Equal(parked()))
		Expect(f.Overlapped()).To(BeFalse())
	})
})
