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

package nodeslice

import (
	"maps"
	"slices"
	"strings"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// managedLabel marks the pools rackwire writes, so that a pool whose NADs all live in other
// namespaces (and so cannot be its owners) is still removed with its last NAD.
const managedLabel = "app.kubernetes.io/managed-by"

const managedBy = "rackwire"

var nadGVK = nadv1.SchemeGroupVersion.WithKind("NetworkAttachmentDefinition")

// desired is the pool as the network's state says it should be, built on base (one a
// controller wrote, see writtenByController; nil: a new pool). With no NAD that reads well,
// only base's conditions change (nil when no pool).
func (r *Reconciler) desired(n *network, c choice, base *nodeslicev1alpha1.NodeSlicePool) *nodeslicev1alpha1.NodeSlicePool {
	var p *nodeslicev1alpha1.NodeSlicePool
	switch {
	case base != nil:
		p = base.DeepCopy()
	case c.ref == nil:
		return nil
	default:
		p = &nodeslicev1alpha1.NodeSlicePool{}
		p.Namespace, p.Name = r.Namespace, c.ref.net.Name
	}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[managedLabel] = managedBy
	p.OwnerReferences = r.owners(p.OwnerReferences, c)
	if c.ref != nil {
		p.Spec = nodeslicev1alpha1.NodeSlicePoolSpec{Range: c.ref.net.Range.String(), SliceSize: c.ref.net.SliceSize}
		listing := n.assign.Listing(MaxListed)
		p.Status.Allocations = make([]nodeslicev1alpha1.NodeSliceAllocation, len(listing))
		for i, a := range listing {
			p.Status.Allocations[i] = nodeslicev1alpha1.NodeSliceAllocation{NodeName: a.Node, SliceRange: a.Slice.String()}
		}
		_, held := n.assign.Held(0)
		p.Status.FreeSlices = ptr.To(int64(n.assign.Usable() - uint64(n.assign.Nodes()) - held))
		p.Status.AssignedSlices = ptr.To(int64(n.assign.Nodes()))
		p.Status.NodesWithoutSlice = ptr.To(int32(len(n.waiting)))
	}
	setConditions(&p.Status, n, c)
	return p
}

// owners replaces the NAD owner references with the network's NADs in the pool's own
// namespace (an owner in another namespace counts as absent to the garbage collector, which
// would delete the pool); the oldest is the controller, as whereabouts writes it.
func (r *Reconciler) owners(refs []metav1.OwnerReference, c choice) []metav1.OwnerReference {
	out := slices.DeleteFunc(slices.Clone(refs), func(o metav1.OwnerReference) bool {
		return o.Kind == nadGVK.Kind && strings.HasPrefix(o.APIVersion, nadGVK.Group+"/")
	})
	controller := true
	for _, v := range c.views {
		if v.nad.Namespace != r.Namespace {
			continue
		}
		out = append(out, metav1.OwnerReference{
			APIVersion: nadGVK.GroupVersion().String(), Kind: nadGVK.Kind, Name: v.nad.Name, UID: v.nad.UID,
			Controller: ptr.To(controller && v.err == nil),
		})
		controller = controller && v.err != nil
	}
	return out
}

// writtenByController says whether rackwire may write and delete the pool: rackwire wrote it
// (its label), or whereabouts' controller did (a NAD owner reference), whose pools rackwire
// takes over. Any other pool is a person's, whose slices the CNI binaries use as listed.
func writtenByController(p *nodeslicev1alpha1.NodeSlicePool) bool {
	if p.Labels[managedLabel] == managedBy {
		return true
	}
	return slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == nadGVK.Kind })
}

// unchanged says whether writing want over have would change anything.
func unchanged(have, want *nodeslicev1alpha1.NodeSlicePool) bool {
	return equality.Semantic.DeepEqual(have.Spec, want.Spec) &&
		equality.Semantic.DeepEqual(have.Status, want.Status) &&
		equality.Semantic.DeepEqual(have.OwnerReferences, want.OwnerReferences) &&
		maps.Equal(have.Labels, want.Labels)
}
