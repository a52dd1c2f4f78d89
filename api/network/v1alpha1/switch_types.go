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

// ProviderRef names the object that knows how to talk to a switch.
type ProviderRef struct {
	// Kind of the provider; AnsibleSwitch is the one rackwire implements.
	// +kubebuilder:validation:Enum=AnsibleSwitch
	Kind string `json:"kind"`

	// Name of the provider object, in the Switch's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// PortInfo describes one real port of the switch and what may be done with it.
type PortInfo struct {
	// Name is the port's name on the switch, e.g. swp1, Ethernet1/1 or an OVS port name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._/:-]*$`
	Name string `json:"name"`

	// Disabled is true if the port must not be configured.
	// +optional
	Disabled bool `json:"disabled,omitempty"`

	// VLANRange is the range of VLANs the port may carry.
	// +optional
	VLANRange VLANRange `json:"vlanRange,omitempty"`

	// TrunkDisable is true if the port may not be a trunk (tagged VLANs).
	// +optional
	TrunkDisable bool `json:"trunkDisable,omitempty"`

	// Namespace is where the port's SwitchPort is created (the tenant's namespace);
	// it defaults to the Switch's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// SwitchSpec defines a switch and its ports.
type SwitchSpec struct {
	// Provider is the object holding the credentials and protocol of the switch.
	Provider ProviderRef `json:"provider"`

	// Ports maps the name of a SwitchPort object to the real port it represents.
	// +kubebuilder:validation:MaxProperties=1024
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 253 && k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'))",message="port keys must be valid SwitchPort object names (lowercase DNS subdomains)"
	// +optional
	Ports map[string]PortInfo `json:"ports,omitempty"`
}

// SwitchStatus is the observed state of a Switch.
type SwitchStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready is true when the provider is usable and every SwitchPort exists.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=switches,scope=Namespaced,categories=metal3;rackwire,shortName=sw
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Provider",type="string",JSONPath=".spec.provider.kind"
// +kubebuilder:printcolumn:name="Provider Name",type="string",JSONPath=".spec.provider.name"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].reason",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Switch is a physical (or virtual) switch managed by the infra team. Its reconciler creates
// one SwitchPort per entry of spec.ports.
type Switch struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SwitchSpec   `json:"spec,omitempty"`
	Status SwitchStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SwitchList contains a list of Switch.
type SwitchList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Switch `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Switch{}, &SwitchList{})
}
