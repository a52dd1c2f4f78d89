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

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler"
)

var _ = Describe("A node-slice network shared with whereabouts", Ordered, func() {
	jade := network{name: "jade", rng: netip.MustParsePrefix("10.78.0.0/24")}

	// A whereabouts NAD on the same NodeSlicePool as a rackwire NAD without
	// whereabouts_lease: the rackwire NAD is warned, naming the key, and the NodeSlicePool is
	// marked for the plugin, which then refuses its ADDs (internal/cni); once whereabouts
	// leaves, the mark goes.
	It("marks the NodeSlicePool and warns the rackwire NAD that lacks whereabouts_lease", func() {
		nsp := &nodeslicev1alpha1.NodeSlicePool{ObjectMeta: metav1.ObjectMeta{Name: jade.name, Namespace: poolNS},
			Spec: nodeslicev1alpha1.NodeSlicePoolSpec{Range: jade.rng.String(), SliceSize: "/28"}}
		Expect(k8s.Create(ctx, nsp)).To(Succeed())
		jade.createNAD(false, `,"node_slice_size":"/28"`)
		wb := &nadv1.NetworkAttachmentDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "jade-wb", Namespace: netNS},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"jade-wb","type":"bridge","ipam":` +
				`{"type":"whereabouts","range":"10.78.0.0/24","node_slice_size":"/28","network_name":"jade"}}`},
		}
		Expect(k8s.Create(ctx, wb)).To(Succeed())
		mark := func() string {
			got := &nodeslicev1alpha1.NodeSlicePool{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(nsp), got); err != nil {
				return err.Error()
			}
			return got.Annotations[ipreconciler.AnnotationSharedWithWhereabouts]
		}
		Eventually(mark).Should(Equal(netNS + "/jade-wb"))
		Eventually(eventNotes(netNS, jade.name)).Should(And(ContainSubstring(ipreconciler.ReasonWhereaboutsLeaseRequired),
			ContainSubstring(`"whereabouts_lease": true`), ContainSubstring(netNS+"/jade-wb")))
		Expect(k8s.Delete(ctx, wb)).To(Succeed())
		Eventually(mark).Should(BeEmpty())
	})
})
