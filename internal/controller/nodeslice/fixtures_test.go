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
	"fmt"
	"net/netip"
	"strings"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// nadConfig is a whereabouts node-slice configuration; extra is more "ipam" JSON members.
func nadConfig(name, network, rng, size, extra string) string {
	nn := ""
	if network != "" {
		nn = fmt.Sprintf(`,"network_name":%q`, network)
	}
	return fmt.Sprintf(`{"cniVersion":"1.0.0","name":%q,"type":"bridge","bridge":"br-%s","ipam":{"type":"whereabouts","range":%q,"node_slice_size":%q%s%s}}`,
		name, name, rng, size, nn, extra)
}

// createNAD creates a NAD and deletes it when the test ends.
func createNAD(ns, name, config string) *nadv1.NetworkAttachmentDefinition {
	nad := &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: config}}
	ExpectWithOffset(1, k8s.Create(ctx, nad)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, nad))).To(Succeed()) })
	return nad
}

// createNodes creates Nodes <prefix>-0.. and deletes them when the test ends.
func createNodes(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
		createNode(names[i])
	}
	return names
}

func createNode(name string) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ExpectWithOffset(1, k8s.Create(ctx, node)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, node))).To(Succeed()) })
}

func deleteNode(name string) {
	ExpectWithOffset(1, k8s.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

func getPool(g Gomega, name string) *nodeslicev1alpha1.NodeSlicePool {
	p := &nodeslicev1alpha1.NodeSlicePool{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: name}, p)).To(Succeed())
	return p
}

// slicesOf maps each node of a pool to its slice.
func slicesOf(g Gomega, name string) map[string]string {
	out := map[string]string{}
	for _, a := range getPool(g, name).Status.Allocations {
		if a.NodeName != "" {
			g.Expect(out).NotTo(HaveKey(a.NodeName), "a node holds two slices")
			out[a.NodeName] = a.SliceRange
		}
	}
	return out
}

// expectSliced waits until exactly nodes hold slices of the pool, each its own, and
// returns them.
func expectSliced(name string, nodes ...string) map[string]string {
	var got map[string]string
	EventuallyWithOffset(1, func(g Gomega) {
		got = slicesOf(g, name)
		g.Expect(got).To(HaveLen(len(nodes)))
		for _, n := range nodes {
			g.Expect(got).To(HaveKey(n))
		}
	}).Should(Succeed())
	seen := map[string]bool{}
	for _, s := range got {
		ExpectWithOffset(1, seen[s]).To(BeFalse(), "slice %s given twice", s)
		seen[s] = true
	}
	return got
}

func condition(name, t string) func(Gomega) string {
	return func(g Gomega) string {
		c := meta.FindStatusCondition(getPool(g, name).Status.Conditions, t)
		if c == nil {
			return ""
		}
		return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
	}
}

// eventNotes lists "reason: note" of the Events about an object.
func eventNotes(ns, name string) func() string {
	return func() string {
		list := &eventsv1.EventList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				out = append(out, e.Reason+": "+e.Note)
			}
		}
		return strings.Join(out, "\n")
	}
}

// createIPPool writes a whereabouts IPPool as the binary names it, holding one address.
func createIPPool(name, rng string) *nodeslicev1alpha1.IPPool {
	p := &nodeslicev1alpha1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: poolNS, Name: name},
		Spec: nodeslicev1alpha1.IPPoolSpec{Range: rng, Allocations: map[string]nodeslicev1alpha1.IPAllocation{
			"1": {ContainerID: "c1", PodRef: "team-a/pod-1", IfName: "net1"},
		}},
	}
	ExpectWithOffset(1, k8s.Create(ctx, p)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, p))).To(Succeed()) })
	return p
}

func overlaps(a, b string) bool {
	return netip.MustParsePrefix(a).Overlaps(netip.MustParsePrefix(b))
}

func poolGone(name string) func() bool {
	return func() bool {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: name}, &nodeslicev1alpha1.NodeSlicePool{})
		return apierrors.IsNotFound(err)
	}
}

var nadv1NAD = nadv1.NetworkAttachmentDefinition{}

// normalize is whereabouts' normalizeRange: ":" and "/" as "-".
func normalize(r string) string { return strings.NewReplacer(":", "-", "/", "-").Replace(r) }
