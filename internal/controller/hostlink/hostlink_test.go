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

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/hostlink"
)

// These specs set the host's states themselves (no BMO runs here; test/e2e runs the real
// one) and check what reaches the SwitchPorts, with the fake switch driver.
var _ = Describe("host links", Ordered, func() {
	const (
		infra, tenant, other = "hl-infra", "hl-tenant", "hl-other"
		chassis              = "aa:bb:cc:00:00:01"
		mac1, mac2           = "52:54:00:00:00:01", "52:54:00:00:00:02"
	)

	BeforeAll(func() {
		for ns, vlans := range map[string]string{infra: "100", tenant: "200-300", other: "301-400"} {
			Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
				Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: networkv1alpha1.VLANRange(vlans)},
			})).To(Succeed())
		}
		meta := metav1.ObjectMeta{Namespace: infra, Name: "leaf"}
		parking := networkv1alpha1.VLANID(4000)
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: meta, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: meta, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.9", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leaf"}}},
			&networkv1alpha1.Switch{ObjectMeta: meta, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leaf"}, ChassisMAC: chassis,
				Clean: networkv1alpha1.CleanPolicy{ParkingVLAN: &parking}, DiscoveryNamespaces: []string{tenant},
				Ports: map[string]networkv1alpha1.PortInfo{
					"leaf-e1": {Name: "Ethernet1/1"},
					"leaf-e2": {Name: "Ethernet1/2"},
					"leaf-t1": {Name: "Ethernet1/9", Namespace: tenant},
				}}},
			&networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "theirs"},
				Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptr.To(networkv1alpha1.VLANID(350))}},
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		for _, name := range []string{"leaf-e1", "leaf-e2"} {
			Eventually(portState(infra, name)).Should(Equal(networkv1alpha1.StateIdle))
		}
		Eventually(portState(tenant, "leaf-t1")).Should(Equal(networkv1alpha1.StateIdle))
	})

	It("refuses a tenant's port a configuration of another namespace, with the field path", func() {
		p := &networkv1alpha1.SwitchPort{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "leaf-t1"}, p)).To(Succeed())
		base := p.DeepCopy()
		p.Spec.Configuration = &networkv1alpha1.ConfigurationRef{Name: "theirs", Namespace: other}
		err := k8s.Patch(ctx, p, client.MergeFrom(base))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.configuration.namespace"))
	})

	It("configures the ports a newer BMO's spec.networkInterfaces names, from the consumer's HostNetworkAttachments", func() {
		hna := func(ns, name string, spec map[string]any) {
			a := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
			a.SetGroupVersionKind(hostlink.HostNetworkAttachmentGVK)
			a.SetNamespace(ns)
			a.SetName(name)
			Expect(k8s.Create(ctx, a)).To(Succeed())
		}
		hna(tenant, "data", map[string]any{"mode": "hybrid", "nativeVLAN": int64(201), "allowedVLANs": []any{int64(210), int64(211), int64(212)}})
		hna(other, "stolen", map[string]any{"mode": "access", "nativeVLAN": int64(350)})
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(hostlink.Metal3MachineGVK)
		m.SetNamespace(tenant)
		m.SetName("m1")
		m.SetAnnotations(map[string]string{networkv1alpha1.AnnotationConsumerHost: tenant + "/h1"})
		Expect(k8s.Create(ctx, m)).To(Succeed())

		h := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"online": true, "bootMACAddress": mac1,
			"bmc":         map[string]any{"address": "ipmi://127.0.0.1:6230", "credentialsName": "h1-bmc"},
			"image":       map[string]any{"url": "http://x/img"},
			"consumerRef": map[string]any{"apiVersion": hostlink.Metal3MachineGVK.GroupVersion().String(), "kind": "Metal3Machine", "namespace": tenant, "name": "m1"},
			"networkInterfaces": []any{
				map[string]any{"macAddress": mac1, "hostNetworkAttachment": map[string]any{"name": "data", "namespace": tenant},
					"switchPort": map[string]any{"switchID": "AA:BB:CC:00:00:01", "portID": "Ethernet1/1"}},
				map[string]any{"name": "eth1", "networkAttachmentRef": map[string]any{"name": "stolen", "namespace": other}},
			},
		}}}
		h.SetGroupVersionKind(metal3v1alpha1.GroupVersion.WithKind("BareMetalHost"))
		h.SetNamespace(tenant)
		h.SetName("h1")
		Expect(k8s.Create(ctx, h)).To(Succeed())
		host := &metal3v1alpha1.BareMetalHost{}
		status := metal3v1alpha1.BareMetalHostStatus{
			OperationalStatus: metal3v1alpha1.OperationalStatusOK,
			Provisioning:      metal3v1alpha1.ProvisionStatus{State: metal3v1alpha1.StateProvisioned, Image: metal3v1alpha1.Image{URL: "http://x/img"}},
			HardwareDetails: &metal3v1alpha1.HardwareDetails{NIC: []metal3v1alpha1.NIC{
				{Name: "eth0", MAC: mac1},
				{Name: "eth1", MAC: mac2, LLDP: &metal3v1alpha1.LLDP{SwitchID: chassis, PortID: "Ethernet1/2"}},
			}},
		}
		// The controller adds its finalizer meanwhile: retry on conflicts, as BMO does.
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "h1"}, host); err != nil {
				return err
			}
			host.Status = status
			return k8s.Status().Update(ctx, host)
		}).Should(Succeed())

		By("the tenant's host, in a namespace the Switch allows discovered wiring for: the tenant's attachment becomes a configuration in the tenant's namespace, linked to the infra team's port")
		Eventually(linkOf(tenant, "h1")).Should(Equal("tenant 2/2"))
		p := &networkv1alpha1.SwitchPort{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "leaf-e1"}, p)).To(Succeed())
		Expect(p.Spec.Configuration).NotTo(BeNil())
		Expect(p.Spec.Configuration.Namespace).To(Equal(tenant))
		Expect(p.Status.State).To(Equal(networkv1alpha1.StateActive))
		Expect(p.Status.Configuration.UntaggedVLAN).To(Equal(ptr.To(networkv1alpha1.VLANID(201))))
		Expect(string(p.Status.Configuration.VLANs)).To(Equal("210-212"))
		cfg := &networkv1alpha1.SwitchPortConfiguration{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: tenant, Name: p.Spec.Configuration.Name}, cfg)).To(Succeed())
		Expect(cfg.Labels).To(HaveKeyWithValue(hostlink.LabelAttachment, "data"))

		By("another namespace's attachment is not applied: that port stays clean and the HostLink says why")
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "leaf-e2"}, p)).To(Succeed())
		Expect(p.Spec.Configuration).To(BeNil())
		l := &networkv1alpha1.HostLink{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "h1"}, l)).To(Succeed())
		c := meta.FindStatusCondition(l.Status.Conditions, networkv1alpha1.ConditionReady)
		Expect(c).NotTo(BeNil())
		Expect(c.Reason).To(Equal(hostlink.ReasonWiringProblem))
		Expect(c.Message).To(ContainSubstring(other + "/stolen"))
		Expect(l.Status.Ports).To(ConsistOf(
			And(HaveField("SwitchPort.Name", "leaf-e1"), HaveField("Source", networkv1alpha1.WiringNetworkInterfaces)),
			And(HaveField("SwitchPort.Name", "leaf-e2"), HaveField("Source", networkv1alpha1.WiringNetworkInterfaces)),
		))

		By("the VLANs count against the tenant's limit, not the infra team's")
		Eventually(func() string {
			lim := &networkv1alpha1.SwitchResourceLimit{}
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: tenant, Name: networkv1alpha1.SwitchResourceLimitName}, lim)
			return lim.Status.UsedVLANs
		}).Should(Equal("201, 210-212"))

		By("the host is not held once its ports carry what it needs")
		Eventually(func() map[string]string {
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "h1"}, host)
			return host.Annotations
		}).ShouldNot(HaveKey(metal3v1alpha1.PausedAnnotation))

		By("deleted, the host waits for its ports to be clean, then goes")
		Expect(k8s.Delete(ctx, host)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "h1"}, host))
		}).Should(BeTrue())
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "leaf-e1"}, p)).To(Succeed())
		Expect(p.Spec.Configuration).To(BeNil())
		Expect(p.Status.State).To(Equal(networkv1alpha1.StateIdle))
	})

	It("gives a host the infra team provisions its HostLink configuration, and releases the ports when the HostLink goes", func() {
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "ops"},
			Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptr.To(networkv1alpha1.VLANID(100))}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "h2"},
			Spec: networkv1alpha1.HostLinkSpec{Ports: []networkv1alpha1.HostPort{
				{MAC: mac2, Port: networkv1alpha1.ObjectRef{Name: "leaf-e2"}, Configuration: &networkv1alpha1.ObjectRef{Name: "ops"}},
			}}})).To(Succeed())
		host := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "h2"},
			Spec: metal3v1alpha1.BareMetalHostSpec{Online: true, BootMACAddress: mac2, Image: &metal3v1alpha1.Image{URL: "http://x/img"},
				BMC: metal3v1alpha1.BMCDetails{Address: "ipmi://127.0.0.1:6231", CredentialsName: "h2-bmc"}}}
		Expect(k8s.Create(ctx, host)).To(Succeed())
		By("held from its first write: the HostLink wires it")
		Expect(host.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "h2"}, host); err != nil {
				return err
			}
			host.Status = metal3v1alpha1.BareMetalHostStatus{OperationalStatus: metal3v1alpha1.OperationalStatusOK,
				Provisioning: metal3v1alpha1.ProvisionStatus{State: metal3v1alpha1.StateProvisioned, Image: metal3v1alpha1.Image{URL: "http://x/img"}}}
			return k8s.Status().Update(ctx, host)
		}).Should(Succeed())
		Eventually(linkOf(infra, "h2")).Should(Equal("tenant 1/1"))
		Expect(portState(infra, "leaf-e2")()).To(Equal(networkv1alpha1.StateActive))

		Expect(k8s.Delete(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "h2"}})).To(Succeed())
		Eventually(portState(infra, "leaf-e2")).Should(Equal(networkv1alpha1.StateIdle))
		p := &networkv1alpha1.SwitchPort{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "leaf-e2"}, p)).To(Succeed())
		Expect(p.Spec.Configuration).To(BeNil())
		Eventually(func() []string {
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "h2"}, host)
			return host.Finalizers
		}).ShouldNot(ContainElement(hostlink.Finalizer))
	})
})

func portState(ns, name string) func() networkv1alpha1.SwitchPortState {
	return func() networkv1alpha1.SwitchPortState {
		p := &networkv1alpha1.SwitchPort{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return networkv1alpha1.SwitchPortState(err.Error())
		}
		return p.Status.State
	}
}

func linkOf(ns, name string) func() string {
	return func() string {
		l := &networkv1alpha1.HostLink{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, l); err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%s %s", l.Status.Network, l.Status.ReadyPorts)
	}
}
