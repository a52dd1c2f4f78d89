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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/hostlink"
)

// clusterctl move pauses the Cluster (spec.paused), not the Metal3Machine: rackwire must see
// the Cluster change itself, both ways.
var _ = Describe("a paused CAPI Cluster", Ordered, func() {
	const (
		ns, mac = "hr-capi", "52:54:29:00:00:01"
		chassis = "aa:bb:cc:00:03:26"
	)
	// The host is reconciled anyway when its SwitchPort's drift check (every minute in this
	// suite) writes the port's status. Within half that interval only the Cluster's own event
	// can bring the change: the bound tells the two paths apart, it does not measure speed.
	const noOtherEvent = 30 * time.Second
	clusterGVK := schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}

	setPaused := func(paused bool) {
		EventuallyWithOffset(1, func() error {
			cl := &unstructured.Unstructured{}
			cl.SetGroupVersionKind(clusterGVK)
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c1"}, cl); err != nil {
				return err
			}
			if err := unstructured.SetNestedField(cl.Object, paused, "spec", "paused"); err != nil {
				return err
			}
			return k8s.Update(ctx, cl)
		}).Should(Succeed())
	}

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "1000-1010"},
		})).To(Succeed())
		m := metav1.ObjectMeta{Namespace: ns, Name: "leafcapi"}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: m, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: m, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.29", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leafcapi"}}},
			&networkv1alpha1.Switch{ObjectMeta: m, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leafcapi"}, ChassisMAC: chassis,
				Clean: networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(4000))},
				Ports: map[string]networkv1alpha1.PortInfo{"c1p1": {Name: "Ethernet5/1"}}}},
			config(ns, "prov", 1000), config(ns, "web1005", 1005),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(portState(ns, "c1p1")).Should(Equal(networkv1alpha1.StateIdle))
		cl := &unstructured.Unstructured{}
		cl.SetGroupVersionKind(clusterGVK)
		cl.SetNamespace(ns)
		cl.SetName("c1")
		Expect(unstructured.SetNestedField(cl.Object, false, "spec", "paused")).To(Succeed())
		Expect(k8s.Create(ctx, cl)).To(Succeed())
	})

	It("keeps rackwire's hold while the Cluster is paused, and lifts it as soon as the Cluster is unpaused", func() {
		machine(ns, "m1", "h1", `[{"configurationRef":{"name":"web1005"},"nicHint":{"mac":"`+mac+`"}}]`)
		setMachineLabel(ns, "m1", "cluster.x-k8s.io/cluster-name", "c1")
		Expect(k8s.Create(ctx, hostLink(ns, "h1", mac, "c1p1", "prov"))).To(Succeed())
		newHost(ns, "h1", mac)
		consume(ns, "h1", ns, "m1")
		setStatus(ns, "h1", metal3v1alpha1.StateProvisioned)
		Eventually(linkOf(ns, "h1")).Should(Equal("tenant 1/1"))
		Eventually(pausedBy(ns, "h1")).Should(BeEmpty())

		By("clusterctl move pauses the Cluster: rackwire's status says so at once")
		setPaused(true)
		Eventually(heldOf(ns, "h1")).WithTimeout(noOtherEvent).Should(And(HavePrefix(hostlink.ReasonConsumerPaused), ContainSubstring("Cluster hr-capi/c1 is paused")))

		By("the image is taken away mid-move: held, the port moves, and the hold stays while the Cluster is paused")
		Eventually(func() error {
			h := &metal3v1alpha1.BareMetalHost{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, h); err != nil {
				return err
			}
			h.Spec.Image = nil
			return k8s.Update(ctx, h)
		}).Should(Succeed())
		Eventually(linkOf(ns, "h1")).Should(Equal("provisioning 1/1"))
		Expect(pausedBy(ns, "h1")()).To(Equal(networkv1alpha1.PausedByRackwire))
		Eventually(func() string {
			h := &metal3v1alpha1.BareMetalHost{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h1"}, h)).To(Succeed())
			return h.Annotations[metal3v1alpha1.StatusAnnotation]
		}).Should(ContainSubstring(`"state":"provisioned"`))

		By("the Cluster is unpaused: nothing else changes, and rackwire lifts its hold")
		setPaused(false)
		Eventually(pausedBy(ns, "h1")).WithTimeout(noOtherEvent).Should(BeEmpty(), "the unpaused Cluster went unnoticed: the host stays paused")
	})
})

// setMachineLabel sets a label of a Metal3Machine, as CAPI puts the Cluster's name on it.
func setMachineLabel(ns, name, key, value string) {
	EventuallyWithOffset(1, func() error {
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(hostlink.Metal3MachineGVK)
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			return err
		}
		l := m.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[key] = value
		m.SetLabels(l)
		return k8s.Update(ctx, m)
	}).Should(Succeed())
}
