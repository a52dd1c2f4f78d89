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

package ipam_test

import (
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rackwire/rackwire/internal/controlplane"
)

var _ = Describe("the IPAM samples that make dev applies", func() {
	It("bind, and the externally managed address is kept out of the pool", func() {
		ns := newNamespace()
		// The samples' pools belong to cluster-1; this suite installs the Cluster CRD, and a
		// claim whose Cluster does not exist allocates nothing. (make dev has no Cluster
		// API core, so there nothing waits for a Cluster.)
		createCluster(ns, "cluster-1", false)
		objs, err := controlplane.ReadObjects(filepath.Join(root, controlplane.SamplesDir))
		Expect(err).NotTo(HaveOccurred())
		var pre map[string]any
		for _, o := range objs {
			if !strings.HasPrefix(o.GetAPIVersion(), "ipam.") {
				continue
			}
			if o.GetName() == "pool-1" {
				pre, _, _ = unstructured.NestedMap(o.Object, "spec", "preAllocations")
			}
			o.SetNamespace(ns)
			Expect(k8s.Create(ctx, o)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
		}
		Expect(pre).NotTo(BeEmpty())
		got := string(boundAddress(ns, "renderdata-1").Spec.Address)
		Expect(got).NotTo(Equal("192.168.0.20"))
		Expect(pre).NotTo(ContainElement(got), "a pre-allocated address given to another claim")
		Expect(boundCAPIAddress(ns, "machine-1-eth0").Spec.Address).To(Equal("fd00:0:0:1::2"))
		Eventually(func(g Gomega) {
			allocations := poolStatus(ns, "pool-1")(g).Indexes
			g.Expect(allocations).To(HaveKeyWithValue("external-bmc", "192.168.0.20"))
			g.Expect(allocations).To(HaveKeyWithValue("renderdata-1", got))
			for claim, a := range pre {
				g.Expect(allocations).To(HaveKeyWithValue(claim, a))
			}
		}).Should(Succeed())
	})
})
