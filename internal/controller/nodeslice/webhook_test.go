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

package nodeslice_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/scheme"
	nodeslicewebhooks "github.com/rackwire/rackwire/webhooks/nodeslice/v1alpha1"
)

// as is a client acting as user (impersonated; system:masters, so that only the webhook can
// refuse its writes).
func as(user string) client.Client {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:masters"}}
	cl, err := client.New(c, client.Options{Scheme: scheme.New()})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return cl
}

var _ = Describe("NodeSlicePool webhook", func() {
	pool := func(name, rng, size string, allocs ...nodeslicev1alpha1.NodeSliceAllocation) *nodeslicev1alpha1.NodeSlicePool {
		return &nodeslicev1alpha1.NodeSlicePool{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			Spec:       nodeslicev1alpha1.NodeSlicePoolSpec{Range: rng, SliceSize: size},
			Status:     nodeslicev1alpha1.NodeSlicePoolStatus{Allocations: allocs},
		}
	}
	It("accepts a pool written by hand as whereabouts writes it", func() {
		Expect(k8s.Create(ctx, pool("by-hand", "10.60.0.0/24", "/25",
			nodeslicev1alpha1.NodeSliceAllocation{NodeName: "n1", SliceRange: "10.60.0.0/25"},
			nodeslicev1alpha1.NodeSliceAllocation{SliceRange: "10.60.0.128/25"}))).To(Succeed())
	})
	DescribeTable("refuses with the field path", func(p *nodeslicev1alpha1.NodeSlicePool, msg string) {
		err := k8s.Create(ctx, p)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(msg))
	},
		Entry("junk range", pool("bad-1", "10.60.0/24", "/26"), "spec.range: Invalid value: \"10.60.0/24\": not a CIDR"),
		Entry("host bits", pool("bad-2", "10.60.0.5/24", "/26"), "spec.range: Invalid value: \"10.60.0.5/24\": must be the network address, 10.60.0.0/24"),
		Entry("junk size", pool("bad-3", "10.60.0.0/24", "x"), "spec.sliceSize: Invalid value: \"x\""),
		Entry("slice larger than range", pool("bad-4", "10.60.0.0/24", "/23"), "spec.sliceSize: Invalid value: \"/23\": slice size /23 is larger than the range"),
		Entry("not a slice", pool("bad-5", "10.60.0.0/24", "/25", nodeslicev1alpha1.NodeSliceAllocation{SliceRange: "10.60.0.64/26"}),
			"status.allocations[0].sliceRange: Invalid value: \"10.60.0.64/26\": not a /25 slice of 10.60.0.0/24"),
		Entry("slice twice", pool("bad-6", "10.60.0.0/24", "/25",
			nodeslicev1alpha1.NodeSliceAllocation{SliceRange: "10.60.0.0/25"}, nodeslicev1alpha1.NodeSliceAllocation{SliceRange: "10.60.0.0/25"}),
			"status.allocations[1].sliceRange: Duplicate value"),
		Entry("node twice", pool("bad-7", "10.60.0.0/24", "/25",
			nodeslicev1alpha1.NodeSliceAllocation{NodeName: "n1", SliceRange: "10.60.0.0/25"}, nodeslicev1alpha1.NodeSliceAllocation{NodeName: "n1", SliceRange: "10.60.0.128/25"}),
			"status.allocations[1].nodeName: Invalid value: \"n1\": the node already holds status.allocations[0]"),
	)

	// The manager's own writes skip the webhook (config/webhook/nodeslicepool.yaml); nobody
	// else does, a ServiceAccount named as the manager's in a tenant's namespace included.
	It("still refuses a bad pool from a tenant's ServiceAccount named like the manager's", func() {
		err := as("system:serviceaccount:team-a:rackwire-controller-manager").Create(ctx,
			pool("bad-tenant", "10.60.0.0/24", "/25", nodeslicev1alpha1.NodeSliceAllocation{SliceRange: "10.60.0.64/26"}))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("status.allocations[0].sliceRange: Invalid value"))
		bad := pool("bad-update", "10.60.0.0/24", "/25", nodeslicev1alpha1.NodeSliceAllocation{SliceRange: "10.60.0.0/25"})
		Expect(k8s.Create(ctx, bad)).To(Succeed())
		bad.Status.Allocations[0].SliceRange = "10.60.0.64/26"
		err = as("system:serviceaccount:team-a:rackwire-controller-manager").Update(ctx, bad)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("status.allocations[0].sliceRange: Invalid value"))
	})
	It("does not review the manager's own writes", func() {
		// A pool the webhook would refuse shows that the review was skipped, not passed.
		Expect(as(nodeslicewebhooks.ManagerUser).Create(ctx,
			pool("by-manager", "10.60.0.0/24", "/25", nodeslicev1alpha1.NodeSliceAllocation{SliceRange: "10.60.0.64/26"}))).To(Succeed())
	})
})
