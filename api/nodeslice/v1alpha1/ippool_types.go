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

// IPPoolSpec is whereabouts' record of the addresses allocated in one range; in node-slice
// mode one IPPool per network and node, named <network>-<node>-<slice with . : / as ->.
type IPPoolSpec struct {
	// Range is the pool's range in CIDR notation.
	Range string `json:"range"`

	// Allocations maps an address's offset from the range's first address (decimal) to its
	// holder.
	Allocations map[string]IPAllocation `json:"allocations"`
}

// IPAllocation is the holder of one address.
type IPAllocation struct {
	// ContainerID is the CNI container id.
	ContainerID string `json:"id"`

	// PodRef is <namespace>/<pod>.
	PodRef string `json:"podref"`

	// IfName is the interface inside the pod.
	// +optional
	IfName string `json:"ifname,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ippools,scope=Namespaced
// +kubebuilder:printcolumn:name="Range",type="string",JSONPath=".spec.range"

// IPPool is whereabouts' allocation record of one range (whereabouts.cni.cncf.io, not
// Metal3's ipam.metal3.io IPPool).
type IPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec IPPoolSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// IPPoolList contains a list of IPPool.
type IPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPPool `json:"items"`
}

func init() {
	SchemeBuilder.Register(&IPPool{}, &IPPoolList{})
}
