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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// The CNI plugin keeps its IPPools free of managedFields (internal/cni/poolfields.go): the
// apiserver then tracks no update or patch of them. A write of the reconciler that gave a pool
// managedFields again (a server-side apply, an update resending ones it cached) would have
// every plugin write to that pool followed by a strip.
var _ = Describe("The IP reconciler's reaping in a pool the CNI plugin stripped", Ordered, func() {
	lime := network{name: "lime", rng: netip.MustParsePrefix("10.77.0.0/24")}

	BeforeAll(func() { lime.createNAD(false, "") })

	It("leaves the pool without managedFields", func() {
		gonePod, livePod := createPod("lime-1", node), createPod("lime-2", node)
		dead := allocate(lime, "", lime.rng, "10.77.0.5", gonePod, "11ee0001")
		live := allocate(lime, "", lime.rng, "10.77.0.6", livePod, "11ee0002")
		pool := &nodeslicev1alpha1.IPPool{ObjectMeta: metav1.ObjectMeta{Name: dead.pool, Namespace: poolNS}}
		strip := []byte(`[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`)
		Expect(k8s.Patch(ctx, pool, client.RawPatch(types.JSONPatchType, strip))).To(Succeed())
		Expect(pool.ManagedFields).To(BeEmpty())

		deletePod(gonePod)
		Eventually(dead.state).Should(Equal("allocated=false reserved=false"))
		Expect(live.state()).To(Equal("allocated=true reserved=true"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
		Expect(pool.ManagedFields).To(BeEmpty(), "the reaping's write is tracked")
	})
})
