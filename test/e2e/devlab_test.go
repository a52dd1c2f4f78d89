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

package e2e

import (
	"context"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/devenv"
)

var _ = Describe("make dev BMO=1 with the switch lab", Ordered, func() {
	ctx := context.Background()
	var env *devenv.Env

	BeforeAll(func() {
		if os.Geteuid() != 0 {
			Skip("the switch lab needs root")
		}
		var err error
		env, err = devenv.Start(ctx, devenv.Options{Root: root, Dir: GinkgoT().TempDir(), Manager: manager, Samples: true, SwitchLab: true, BMO: true, Log: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
		Expect(env.Lab).NotTo(BeNil())
	})

	It("points the sample Switch at the lab: Ready, and both sample ports Active on the lab's Open vSwitch", func() {
		admin := clientFor(env.Kubeconfig)
		Eventually(func(g Gomega) string {
			sw := &networkv1alpha1.Switch{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "switch-example"}, sw)).To(Succeed())
			for _, c := range sw.Status.Conditions {
				if c.Type == networkv1alpha1.ConditionReady {
					return string(c.Status) + "/" + c.Reason
				}
			}
			return ""
		}, 3*time.Minute, time.Second).Should(Equal("True/Ready"))
		for _, name := range []string{"switchport-example", "switchport-access"} {
			Eventually(func(g Gomega) networkv1alpha1.SwitchPortState {
				p := &networkv1alpha1.SwitchPort{}
				g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p)).To(Succeed())
				return p.Status.State
			}, 3*time.Minute, time.Second).Should(Equal(networkv1alpha1.StateActive), name)
		}
		// The access port carries VLAN 6 untagged on the lab's bridge.
		Expect(env.Lab.Get("Port", "p1", "tag")).To(Equal("6"))
	})

	It("walks the sample host to available under BMO, its port on the provisioning configuration", func() {
		admin := clientFor(env.Kubeconfig)
		Eventually(func(g Gomega) string {
			h := &metal3v1alpha1.BareMetalHost{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "host-example"}, h)).To(Succeed())
			return string(h.Status.Provisioning.State)
		}, 5*time.Minute, time.Second).Should(Equal(string(metal3v1alpha1.StateAvailable)))
		Eventually(func(g Gomega) string {
			l := &networkv1alpha1.HostLink{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "host-example"}, l)).To(Succeed())
			c := meta.FindStatusCondition(l.Status.Conditions, networkv1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			return string(l.Status.Network) + " " + l.Status.ReadyPorts + " " + c.Reason
		}, 2*time.Minute, time.Second).Should(Equal("provisioning 1/1 PortsReady"))
		p := &networkv1alpha1.SwitchPort{}
		Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "switchport-example"}, p)).To(Succeed())
		Expect(p.Status.ConfigurationRef).NotTo(BeNil())
		Expect(p.Status.ConfigurationRef.Name).To(Equal("switchportconfiguration-example"))
		Expect(env.Lab.Get("Port", "p0", "tag")).To(Equal("6"))
	})
})
