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

// SwitchResourceLimitName is the only name a SwitchResourceLimit may have: one limit per
// namespace, found without a list.
const SwitchResourceLimitName = "user-limit"

// SwitchResourceLimitSpec bounds what a tenant's configurations may use.
type SwitchResourceLimitSpec struct {
	// VLANRange is the range of VLANs the namespace's configurations may use.
	VLANRange VLANRange `json:"vlanRange"`

	// SharedVLANRange marks VLANs of vlanRange that other namespaces' limits may include
	// too (a network the infra team shares on purpose). Two namespaces' ranges may overlap
	// only on VLANs that both mark as shared.
	// +optional
	SharedVLANRange VLANRange `json:"sharedVLANRange,omitempty"`
}

// SwitchResourceLimitStatus reports what the namespace uses.
type SwitchResourceLimitStatus struct {
	// UsedVLANs are the VLANs configured on the namespace's ports, in range syntax.
	// +optional
	UsedVLANs string `json:"usedVLANs,omitempty"`

	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready is true when every VLAN in use lies inside the range.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=switchresourcelimits,scope=Namespaced,categories=metal3;rackwire,shortName=swrl
// +kubebuilder:subresource:status
// The apiserver cannot attach a field path to a rule about metadata.name, so the message
// names the field itself.
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'user-limit'",message="metadata.name must be user-limit: there is one SwitchResourceLimit per namespace"
// +kubebuilder:printcolumn:name="VLAN Range",type="string",JSONPath=".spec.vlanRange"
// +kubebuilder:printcolumn:name="Shared",type="string",JSONPath=".spec.sharedVLANRange",priority=1
// +kubebuilder:printcolumn:name="In Use",type="string",JSONPath=".status.usedVLANs"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// SwitchResourceLimit is the infra team's limit on a tenant namespace.
type SwitchResourceLimit struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SwitchResourceLimitSpec   `json:"spec,omitempty"`
	Status SwitchResourceLimitStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SwitchResourceLimitList contains a list of SwitchResourceLimit.
type SwitchResourceLimitList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SwitchResourceLimit `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SwitchResourceLimit{}, &SwitchResourceLimitList{})
}
