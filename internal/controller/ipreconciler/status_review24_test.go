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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("The IP reconciler, under review 24, with a network-status a tenant wrote", Ordered, func() {
	onyx := network{name: "onyx", rng: netip.MustParsePrefix("10.66.200.0/24")}

	BeforeAll(func() { onyx.createNAD(false, `,"enable_overlapping_ranges":false`) })

	// As the amber spec: the earlier onyx-0's DEL never came, and the re-created onyx-0 holds
	// 10.66.200.6 in its live sandbox. Its owner (anyone who may update pods in its namespace)
	// rewrites network-status to list the earlier sandbox's 10.66.200.5 instead. The reconciler
	// must not reap the live sandbox's entry on that word: its address would be handed to
	// another pod, of any namespace, while onyx-0 still uses it (one address, two holders).
	// Nothing else the apiserver holds names a pod's live sandbox, so by default (no
	// --ip-reconciler-trust-network-status) the reconciler reads no network-status at all:
	// the earlier sandbox's entry leaks until onyx-0 goes, never a double allocation.
	It("does not reap a live sandbox's entry because the pod's network-status lists the earlier one", func() {
		old := createPod("onyx-0", node)
		stale := allocateOnly(onyx, onyx.rng, "10.66.200.5", old, "onx0ld01")
		deletePod(old)
		renewed := createPod("onyx-0", node)
		live := allocateOnly(onyx, onyx.rng, "10.66.200.6", renewed, "onxnew01")
		renewed.Annotations = map[string]string{"k8s.v1.cni.cncf.io/network-status": `[{"name":"` + appNS + `/onyx","interface":"net1","ips":["10.66.200.5"],"mac":"0a:58:0a:42:c8:05"}]`}
		Expect(k8s.Update(ctx, renewed)).To(Succeed())
		Consistently(live.allocated, 6*grace+5*time.Second).Should(BeTrue(),
			"the live sandbox's entry (container onxnew01) was reaped on the word of a tenant-written network-status")
		_ = stale
	})

	opal := network{name: "opal", rng: netip.MustParsePrefix("10.66.201.0/24")}

	// On a network with reservations the reservations date the sandboxes (Superseded): the
	// tenant-written network-status must not overrule them and get the live sandbox's entry
	// reaped while the earlier sandbox's is still recorded.
	It("does not reap a live sandbox's dated entry because the pod's network-status lists the earlier one", func() {
		opal.createNAD(false, "")
		pod := createPod("opal-0", node)
		earlier := allocate(opal, "", opal.rng, "10.66.201.5", pod, "opl0ld01")
		live := allocate(opal, "", opal.rng, "10.66.201.6", pod, "oplnew01")
		pod.Annotations = map[string]string{"k8s.v1.cni.cncf.io/network-status": `[{"name":"` + appNS + `/opal","interface":"net1","ips":["10.66.201.5"],"mac":"0a:58:0a:42:c9:05"}]`}
		Expect(k8s.Update(ctx, pod)).To(Succeed())
		Consistently(live.allocated, 6*grace+5*time.Second).Should(BeTrue(),
			"the live sandbox's entry (container oplnew01, reserved after opl0ld01) was reaped on the word of a tenant-written network-status")
		_ = earlier
	})
})
