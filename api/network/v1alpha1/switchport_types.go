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

// SwitchPortState is a state of the SwitchPort state machine. None, the first state, is
// written as an absent state, as the Metal3 proposal has it.
// +kubebuilder:validation:Enum=Idle;Configuring;Active;Cleaning;Deleting
type SwitchPortState string

const (
	// StateNone is a port the controller has not seen yet; it is written as an empty state.
	StateNone SwitchPortState = ""
	// StateIdle is a port with no configuration on the switch, waiting for one to be linked.
	StateIdle SwitchPortState = "Idle"
	// StateConfiguring is a port whose linked configuration is being applied.
	StateConfiguring SwitchPortState = "Configuring"
	// StateActive is a port whose switch configuration matches the linked configuration.
	StateActive SwitchPortState = "Active"
	// StateCleaning is a port whose configuration is being removed from the switch.
	StateCleaning SwitchPortState = "Cleaning"
	// StateDeleting is a clean port being deleted; its finalizer is removed next.
	StateDeleting SwitchPortState = "Deleting"
)

// ConfigurationRef links a SwitchPortConfiguration.
type ConfigurationRef struct {
	// Name of the SwitchPortConfiguration.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the SwitchPortConfiguration; it must be the SwitchPort's own namespace
	// and defaults to it.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// SwitchRef names a Switch.
type SwitchRef struct {
	// Namespace of the Switch.
	Namespace string `json:"namespace"`
	// Name of the Switch.
	Name string `json:"name"`
}

// SwitchPortSpec is what a tenant (or BMO / CAPM3 on their behalf) wants on the port.
type SwitchPortSpec struct {
	// Configuration is the SwitchPortConfiguration to apply; empty means the port is
	// cleaned and left idle.
	// +optional
	Configuration *ConfigurationRef `json:"configuration,omitempty"`
}

// SwitchPortStatus is where the port is in its state machine and what is on the switch.
type SwitchPortStatus struct {
	// State of the port; empty is the None state.
	// +optional
	State SwitchPortState `json:"state,omitempty"`

	// Switch is the Switch whose entry vouched for the physical port when status.configuration
	// was applied; with PortName it says where the port is cleaned, whatever the entry says now.
	// +optional
	Switch *SwitchRef `json:"switch,omitempty"`

	// PortName is the physical port on that switch that holds status.configuration.
	// +optional
	PortName string `json:"portName,omitempty"`

	// Clean is set while the physical port holds its clean state (deconfigured or
	// provisioning) rather than a tenant's configuration.
	// +optional
	Clean CleanMode `json:"clean,omitempty"`

	// ConfigurationRef is the configuration currently applied to the switch port: the
	// tenant's, or the infra team's provisioning configuration of a clean port.
	// +optional
	ConfigurationRef *ConfigurationRef `json:"configurationRef,omitempty"`

	// Configuration is a copy of what was applied, so the port can be cleaned and checked
	// for drift even after the SwitchPortConfiguration changes or is gone.
	// +optional
	Configuration *SwitchPortConfigurationSpec `json:"configuration,omitempty"`

	// NativeVLAN is the VLAN that the untagged frames of the held configuration join when it is
	// a trunk that names no untagged VLAN: the Switch's parking VLAN when it was applied. A
	// port whose parking VLAN moves since is applied again.
	// +optional
	NativeVLAN int32 `json:"nativeVLAN,omitempty"`

	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready is true in a steady state (Idle or Active) that matches the spec;
	// a failed or half-done switch change is reported here with its reason.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=switchports,scope=Namespaced,categories=metal3;rackwire,shortName=swp
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.state"
// +kubebuilder:printcolumn:name="Switch",type="string",JSONPath=".status.switch.name",description="Switch of the physical port"
// +kubebuilder:printcolumn:name="Port",type="string",JSONPath=".status.portName",description="Physical port"
// +kubebuilder:printcolumn:name="Configuration",type="string",JSONPath=".spec.configuration.name",description="Linked configuration"
// +kubebuilder:printcolumn:name="Applied",type="string",JSONPath=".status.configurationRef.name",description="Configuration on the switch"
// +kubebuilder:printcolumn:name="Clean",type="string",JSONPath=".status.clean",description="Clean state held",priority=1
// +kubebuilder:printcolumn:name="VLANs",type="string",JSONPath=".status.configuration.vlans",description="Tagged VLANs on the switch",priority=1
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// SwitchPort represents one port of a Switch; the Switch reconciler creates it.
type SwitchPort struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SwitchPortSpec   `json:"spec,omitempty"`
	Status SwitchPortStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SwitchPortList contains a list of SwitchPort.
type SwitchPortList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SwitchPort `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SwitchPort{}, &SwitchPortList{})
}
