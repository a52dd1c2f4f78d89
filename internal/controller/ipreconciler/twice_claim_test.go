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

package ipreconciler_test

import (
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler"
)

var _ = Describe("An address on a pod and on an IPAMClaim", Ordered, func() {
	It("names the claim without an empty container", func() {
		blue := network{name: "r46blue", rng: netip.MustParsePrefix("10.246.70.0/24")}
		blue.createNAD(false, "")
		pod := createPod("r46-twice", node)
		rec := allocate(blue, "", blue.rng, "10.246.70.46", pod, "r46a0001")
		o, err := rec.reservation()
		Expect(err).NotTo(HaveOccurred())
		// The reservation is now an IPAMClaim's, as the claim controller writes it.
		o.Labels = map[string]string{ipamclaim.LabelClaim: "vm-r46.r46blue", ipamclaim.LabelClaimNamespace: appNS, ipamclaim.LabelManagedBy: "rackwire"}
		o.Spec.ContainerID, o.Spec.IfName, o.Spec.PodRef = "", "", appNS+"/vm-r46.blue"
		Expect(k8s.Update(ctx, o)).To(Succeed())
		Eventually(eventNotes(appNS, pod.Name)).Should(ContainSubstring(ipreconciler.ReasonHeldTwice))
		Expect(eventNotes(appNS, pod.Name)()).NotTo(ContainSubstring("(container )"))
	})
})
