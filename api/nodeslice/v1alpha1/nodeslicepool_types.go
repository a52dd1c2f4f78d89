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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeSlicePoolSpec is the network's whole range and the size of the slice each node gets.
type NodeSlicePoolSpec struct {
	// Range is the network's range in CIDR notation (the network address, as whereabouts
	// normalises it), IPv4 or IPv6.
	// +kubebuilder:validation:MaxLength=64
	Range string `json:"range"`

	// SliceSize is the prefix length of a node's slice, as the NAD's node_slice_size gives it
	// ("/28" or "28").
	// +kubebuilder:validation:MaxLength=4
	SliceSize string `json:"sliceSize"`
}

// NodeSlicePoolStatus lists the slices and the node each one is given to. It is part of the
// object (no status subresource), as whereabouts' controller writes it.
type NodeSlicePoolStatus struct {
	// Allocations lists the slices in address order; an empty nodeName is a free slice. A pool
	// of more than 8192 slices lists only the ones given to nodes (an IPv6 /64 cut into /80s
	// is never enumerated); FreeSlices counts the rest.
	// +listType=atomic
	// +optional
	Allocations []NodeSliceAllocation `json:"allocations"`

	// AssignedSlices counts the slices given to Nodes (rackwire only): past 8192 slices the
	// listing is not the pool, and a count reads better than a list in kubectl.
	// +optional
	AssignedSlices *int64 `json:"assignedSlices,omitempty"`

	// FreeSlices counts the slices no node holds and that may be handed out (rackwire only).
	// +optional
	FreeSlices *int64 `json:"freeSlices,omitempty"`

	// NodesWithoutSlice counts the Nodes that hold no slice of this pool (rackwire only): the
	// whereabouts binary fails on such a node.
	// +optional
	NodesWithoutSlice *int32 `json:"nodesWithoutSlice,omitempty"`

	// Conditions of the pool (rackwire only): Ready, ConfigConflict, NodesWithoutSlice,
	// SlicesHeld.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodeSliceAllocation is one slice and the node it is given to.
type NodeSliceAllocation struct {
	// NodeName is the node the slice is given to; empty for a free slice.
	NodeName string `json:"nodeName"`

	// SliceRange is the slice in CIDR notation.
	SliceRange string `json:"sliceRange"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodeslicepools,scope=Namespaced,categories=rackwire
// +kubebuilder:printcolumn:name="Range",type="string",JSONPath=".spec.range"
// +kubebuilder:printcolumn:name="Slice",type="string",JSONPath=".spec.sliceSize"
// +kubebuilder:printcolumn:name="Assigned",type="integer",JSONPath=".status.assignedSlices",description="Slices given to Nodes"
// +kubebuilder:printcolumn:name="Free",type="integer",JSONPath=".status.freeSlices"
// +kubebuilder:printcolumn:name="Unsliced",type="integer",JSONPath=".status.nodesWithoutSlice"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"

// NodeSlicePool hands each node a slice of one network's range; it is named after the
// network (the NAD's network_name, else its name) and lives where the CNI binaries look.
type NodeSlicePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodeSlicePoolSpec   `json:"spec,omitempty"`
	Status NodeSlicePoolStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NodeSlicePoolList contains a list of NodeSlicePool.
type NodeSlicePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeSlicePool `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodeSlicePool{}, &NodeSlicePoolList{})
}
