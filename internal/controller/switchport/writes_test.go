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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/scheme"
)

var _ = Describe("status writes", func() {
	It("write a port Idle once: neither the reconcile its write causes nor the drift reads write it again", func() {
		ns := newNamespace()
		wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
		Expect(err).NotTo(HaveOccurred())
		w, err := wc.Watch(ctx, &networkv1alpha1.SwitchPortList{}, client.InNamespace(ns))
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		newSwitch(ns, "quiet", map[string]networkv1alpha1.PortInfo{"q0": {Name: "port0"}})

		// Two drift intervals (the suite's is 2s) after the port is first written Idle.
		idle := 0
		var until <-chan time.Time
		for done := false; !done; {
			select {
			case e, ok := <-w.ResultChan():
				Expect(ok).To(BeTrue(), "the watch ended")
				if p, isPort := e.Object.(*networkv1alpha1.SwitchPort); isPort && e.Type == watch.Modified && p.Status.State == networkv1alpha1.StateIdle {
					idle++
					if until == nil {
						until = time.After(4500 * time.Millisecond)
					}
				}
			case <-until:
				done = true
			case <-time.After(time.Minute):
				Fail("the port did not reach Idle")
			}
		}
		Expect(idle).To(Equal(1), "writes of the Idle port")
	})
})
