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
	"fmt"
	"sync/atomic"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver/fake"
)

func newNamespace() string {
	ns := &corev1.Namespace{}
	ns.GenerateName = "swp-"
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func key(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// newSwitch creates a Switch with its AnsibleSwitch (same name) and credentials, and
// returns the fake that stands for the switch.
func newSwitch(ns, name string, ports map[string]networkv1alpha1.PortInfo) *fake.Switch {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-creds"},
		StringData: map[string]string{"username": "u", "password": "p"}}
	Expect(k8s.Create(ctx, secret)).To(Succeed())
	Expect(k8s.Create(ctx, ansibleSwitch(ns, name))).To(Succeed())
	Expect(k8s.Create(ctx, switchObj(ns, name, ports))).To(Succeed())
	return fakes.Get(ns, name)
}

// devices hands every AnsibleSwitch of the suite its own address: one device has one
// AnsibleSwitch and one Switch.
var devices atomic.Int32

func ansibleSwitch(ns, name string) *networkv1alpha1.AnsibleSwitch {
	n := devices.Add(1)
	return &networkv1alpha1.AnsibleSwitch{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: fmt.Sprintf("10.9.%d.%d", n/250, n%250+1), Port: 22, Bridge: "br0", InsecureIgnoreHostKey: true,
			CredentialsSecret: networkv1alpha1.SecretRef{Name: name + "-creds"}},
	}
}

// parking is the parking VLAN of the suite's Switches, outside every test limit.
const parking = 4000

func switchObj(ns, name string, ports map[string]networkv1alpha1.PortInfo) *networkv1alpha1.Switch {
	return &networkv1alpha1.Switch{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkv1alpha1.SwitchSpec{
			Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: name},
			Clean:    networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(parking))},
			Ports:    ports,
		},
	}
}

// parked is what a deconfigured port of the suite's Switches holds.
func parked() *networkv1alpha1.SwitchPortConfigurationSpec {
	return &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptr.To(networkv1alpha1.VLANID(parking))}
}

// newLimit creates the namespace's limit. Test namespaces reuse the same VLANs, so their
// limits mark them shared, as an infra team would for a network several teams use.
func newLimit(ns, vlans string) {
	l := &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
		Spec: networkv1alpha1.SwitchResourceLimitSpec{VLANRange: networkv1alpha1.VLANRange(vlans), SharedVLANRange: networkv1alpha1.VLANRange(vlans)}}
	Expect(k8s.Create(ctx, l)).To(Succeed())
}

func configuration(ns, name string, untagged int32, vlans string) *networkv1alpha1.SwitchPortConfiguration {
	c := &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkv1alpha1.SwitchPortConfigurationSpec{VLANs: networkv1alpha1.VLANRange(vlans)}}
	if untagged > 0 {
		c.Spec.UntaggedVLAN = ptr.To(networkv1alpha1.VLANID(untagged))
	}
	return c
}

func newConfiguration(ns, name string, untagged int32, vlans string) *networkv1alpha1.SwitchPortConfiguration {
	c := configuration(ns, name, untagged, vlans)
	ExpectWithOffset(1, k8s.Create(ctx, c)).To(Succeed())
	return c
}

func port(ns, name string) *networkv1alpha1.SwitchPort {
	p := &networkv1alpha1.SwitchPort{}
	ExpectWithOffset(1, k8s.Get(ctx, key(ns, name), p)).To(Succeed())
	return p
}

// link sets (or, with an empty name, clears) a port's configuration.
func link(c client.Client, ns, name, cfgName string) error {
	p := &networkv1alpha1.SwitchPort{}
	if err := c.Get(ctx, key(ns, name), p); err != nil {
		return err
	}
	base := p.DeepCopy()
	p.Spec.Configuration = nil
	if cfgName != "" {
		p.Spec.Configuration = &networkv1alpha1.ConfigurationRef{Name: cfgName}
	}
	return c.Patch(ctx, p, client.MergeFrom(base))
}

func stateOf(ns, name string) func() networkv1alpha1.SwitchPortState {
	return func() networkv1alpha1.SwitchPortState {
		p := &networkv1alpha1.SwitchPort{}
		if err := k8s.Get(ctx, key(ns, name), p); err != nil {
			return networkv1alpha1.SwitchPortState("<" + err.Error() + ">")
		}
		return p.Status.State
	}
}

// conditionOf returns "Status/Reason: message" of a port condition.
func conditionOf(ns, name, t string) func() string {
	return func() string {
		p := &networkv1alpha1.SwitchPort{}
		if err := k8s.Get(ctx, key(ns, name), p); err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(p.Status.Conditions, t)
		if c == nil {
			return ""
		}
		return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
	}
}

func switchReady(ns, name string) func() string {
	return func() string {
		sw := &networkv1alpha1.Switch{}
		if err := k8s.Get(ctx, key(ns, name), sw); err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(sw.Status.Conditions, networkv1alpha1.ConditionReady)
		if c == nil {
			return ""
		}
		return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
	}
}

// eventReasons lists the reasons of the Events about an object.
func eventReasons(ns, name string) func() []string {
	return func() []string {
		list := &eventsv1.EventList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil
		}
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				out = append(out, e.Reason+": "+e.Note)
			}
		}
		return out
	}
}

// cleans counts the changes that parked a port on a fake switch.
func cleans(f *fake.Switch, portName string) int {
	n := 0
	for _, c := range f.ApplyCalls() {
		for _, ch := range c.Changes {
			if ch.Port == portName && equality.Semantic.DeepEqual(ch.Config, parked()) {
				n++
			}
		}
	}
	return n
}

// changesTo lists, in order, what the fake switch was told to put on its ports, as
// "port:untagged/vlans".
func changesTo(f *fake.Switch) []string {
	var out []string
	for _, c := range f.ApplyCalls() {
		for _, ch := range c.Changes {
			u := int32(0)
			if ch.Config != nil && ch.Config.UntaggedVLAN != nil {
				u = int32(*ch.Config.UntaggedVLAN)
			}
			v := ""
			if ch.Config != nil {
				v = string(ch.Config.VLANs)
			}
			out = append(out, fmt.Sprintf("%s:%d/%s", ch.Port, u, v))
		}
	}
	return out
}

func onSwitch(f *fake.Switch, portName string) func() *networkv1alpha1.SwitchPortConfigurationSpec {
	return func() *networkv1alpha1.SwitchPortConfigurationSpec { return f.Port(portName) }
}

type corev1Secret struct{ ns, name string }

func (s corev1Secret) obj() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.name},
		StringData: map[string]string{"username": "u", "password": "p"}}
}
