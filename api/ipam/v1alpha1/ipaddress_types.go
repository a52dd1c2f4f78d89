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

// IPAddressSpec is one allocated address and the network parameters that go with it.
// Its object name is <pool namePrefix>-<address with . and : replaced by ->, so the
// apiserver itself refuses a second owner of one address.
type IPAddressSpec struct {
	// Claim is the IPClaim this address was allocated to.
	Claim corev1.ObjectReference `json:"claim"`

	// Pool is the IPPool the address comes from.
	Pool corev1.ObjectReference `json:"pool"`

	// Address is the allocated address.
	Address IPAddressStr `json:"address"`

	// Prefix is the prefix length of the address's network.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int32 `json:"prefix,omitempty"`

	// Gateway of the address's network.
	// +optional
	Gateway *IPAddressStr `json:"gateway,omitempty"`

	// DNSServers of the address's network.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	DNSServers []IPAddressStr `json:"dnsServers,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io="
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move="
// +kubebuilder:resource:path=ipaddresses,scope=Namespaced,categories=cluster-api;metal3;rackwire,shortName=ipa;ipaddress;m3ipa;m3ipaddress;m3ipaddresses;metal3ipa;metal3ipaddress;metal3ipaddresses
// +kubebuilder:printcolumn:name="Address",type="string",JSONPath=".spec.address"
// +kubebuilder:printcolumn:name="Prefix",type="integer",JSONPath=".spec.prefix"
// +kubebuilder:printcolumn:name="Gateway",type="string",JSONPath=".spec.gateway"
// +kubebuilder:printcolumn:name="Pool",type="string",JSONPath=".spec.pool.name"
// +kubebuilder:printcolumn:name="Claim",type="string",JSONPath=".spec.claim.name"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// IPAddress records one address in use. It is the source of truth for allocations.
type IPAddress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec IPAddressSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// IPAddressList contains a list of IPAddress.
type IPAddressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPAddress `json:"items"`
}

func init() {
	SchemeBuilder.Register(&IPAddress{}, &IPAddressList{})
}
