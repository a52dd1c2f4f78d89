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

// OverlappingRangeIPReservationSpec names the holder of one address across overlapping
// ranges; the object is named after the address.
type OverlappingRangeIPReservationSpec struct {
	// ContainerID is the CNI container id.
	// +optional
	ContainerID string `json:"containerid,omitempty"`

	// PodRef is <namespace>/<pod>.
	PodRef string `json:"podref"`

	// IfName is the interface inside the pod.
	// +optional
	IfName string `json:"ifname,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=overlappingrangeipreservations,scope=Namespaced

// OverlappingRangeIPReservation reserves one address cluster-wide, as whereabouts writes it.
type OverlappingRangeIPReservation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OverlappingRangeIPReservationSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// OverlappingRangeIPReservationList contains a list of OverlappingRangeIPReservation.
type OverlappingRangeIPReservationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OverlappingRangeIPReservation `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OverlappingRangeIPReservation{}, &OverlappingRangeIPReservationList{})
}
