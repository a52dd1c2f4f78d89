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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IPClaimSpec names the pool to draw an address from.
type IPClaimSpec struct {
	// Pool is the IPPool to allocate from; it must be in the claim's namespace.
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="pool.name is required"
	Pool corev1.ObjectReference `json:"pool"`
}

// IPClaimStatus says which IPAddress answers the claim, or why none does yet.
type IPClaimStatus struct {
	// Address is the IPAddress object allocated to this claim.
	// +optional
	Address *corev1.ObjectReference `json:"address,omitempty"`

	// ErrorMessage explains why no address could be allocated.
	// +optional
	ErrorMessage *string `json:"errorMessage,omitempty"`

	// Conditions: Ready is true once an address is allocated.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io="
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move-hierarchy="
// +kubebuilder:resource:path=ipclaims,scope=Namespaced,categories=cluster-api;rackwire,shortName=ipc;ipclaim;m3ipc;m3ipclaim;m3ipclaims;metal3ipc;metal3ipclaim;metal3ipclaims
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Pool",type="string",JSONPath=".spec.pool.name",description="Pool the address comes from"
// +kubebuilder:printcolumn:name="Address",type="string",JSONPath=".status.address.name",description="IPAddress allocated to the claim"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Error",type="string",JSONPath=".status.errorMessage",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// IPClaim asks an IPPool for one address.
type IPClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   IPClaimSpec   `json:"spec,omitempty"`
	Status IPClaimStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// IPClaimList contains a list of IPClaim.
type IPClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPClaim `json:"items"`
}

func init() {
	SchemeBuilder.Register(&IPClaim{}, &IPClaimList{})
}
