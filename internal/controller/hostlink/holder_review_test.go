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

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/hostlink"
)

// Review of the holds: a HostLink the infra team wrote outlives its host. When the host was
// let go by the release annotation (its port not confirmed clean), the HostLink's status and
// the port's holder record still name the port; nothing refreshes them once the host is gone,
// so a later host given that port waits for a host that no longer exists.
var _ = Describe("a HostLink whose host is gone", Ordered, func() {
	const (
		ns, macX, macY = "hr-gone-review", "52:54:32:00:00:01", "52:54:32:00:00:02"
		chassis        = "aa:bb:cc:00:07:26"
	)

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "1400-1420"},
		})).To(Succeed())
		m := metav1.ObjectMeta{Namespace: ns, Name: "leafgone"}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: m, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: m, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.33", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leafgone"}}},
			&networkv1alpha1.Switch{ObjectMeta: m, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leafgone"}, ChassisMAC: chassis,
				Clean: networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(4000))},
				Ports: map[string]networkv1alpha1.PortInfo{"g1": {Name: "Ethernet8/1"}, "g2": {Name: "Ethernet8/2"}}}},
			config(ns, "prov", 1400),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(portState(ns, "g1")).Should(Equal(networkv1alpha1.StateIdle))
		Eventually(portState(ns, "g2")).Should(Equal(networkv1alpha1.StateIdle))
	})

	It("holds no port: a host later given its port takes it", func() {
		Expect(k8s.Create(ctx, hostLink(ns, "hx", macX, "g1", "prov"))).To(Succeed())
		newHost(ns, "hx", macX)
		Eventually(linkOf(ns, "hx")).Should(Equal("provisioning 1/1"))

		By("the switch stops answering, the host is deleted and let go by the release annotation")
		drivers.Get(ns, "leafgone").FailPort("Ethernet8/1", errors.New("switch unreachable"))
		DeferCleanup(func() { drivers.Get(ns, "leafgone").FailPort("Ethernet8/1", nil) })
		h := &metal3v1alpha1.BareMetalHost{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hx"}, h)).To(Succeed())
		Expect(k8s.Delete(ctx, h)).To(Succeed())
		Eventually(readyOf(ns, "hx")).Should(HavePrefix(hostlink.ReasonPortFailed))
		l := &networkv1alpha1.HostLink{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hx"}, l)).To(Succeed())
		base := l.DeepCopy()
		l.Annotations = map[string]string{networkv1alpha1.AnnotationReleaseHost: "true"}
		Expect(k8s.Patch(ctx, l, client.MergeFrom(base))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hx"}, &metal3v1alpha1.BareMetalHost{}))
		}).Should(BeTrue())

		By("the switch answers again: the port is cleaned")
		drivers.Get(ns, "leafgone").FailPort("Ethernet8/1", nil)
		Eventually(portState(ns, "g1")).Should(Equal(networkv1alpha1.StateIdle))
		Expect(configOf(ns, "g1")()).To(BeEmpty())

		By("the infra team gives g1 to another host: the old HostLink's entry moves to g2, a new one names g1")
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hx"}, l); err != nil {
				return err
			}
			l.Spec.Ports[0].Port.Name = "g2"
			return k8s.Update(ctx, l)
		}).Should(Succeed())
		Expect(k8s.Create(ctx, hostLink(ns, "hy", macY, "g1", "prov"))).To(Succeed())
		newHost(ns, "hy", macY)
		Eventually(linkOf(ns, "hy")).Should(Equal("provisioning 1/1"), heldOf(ns, "hy"))
		Expect(configOf(ns, "g1")()).To(Equal(ns + "/prov"))
		Expect(pausedBy(ns, "hy")()).To(BeEmpty())
	})
})
