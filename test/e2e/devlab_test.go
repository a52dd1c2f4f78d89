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

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/devenv"
)

var _ = Describe("make dev with the switch lab", Ordered, func() {
	ctx := context.Background()
	var env *devenv.Env

	BeforeAll(func() {
		if os.Geteuid() != 0 {
			Skip("the switch lab needs root")
		}
		var err error
		env, err = devenv.Start(ctx, devenv.Options{Root: root, Dir: GinkgoT().TempDir(), Manager: manager, Samples: true, SwitchLab: true, Log: GinkgoWriter})
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
})
