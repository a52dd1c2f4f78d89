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

// CleanMode is what a port holds when no tenant configuration is on it.
// +kubebuilder:validation:Enum=deconfigured;provisioning
type CleanMode string

const (
	// CleanDeconfigured parks the port: up (LLDP keeps working), in access mode on the
	// Switch's isolated parking VLAN, no trunks, no access rules.
	CleanDeconfigured CleanMode = "deconfigured"
	// CleanProvisioning puts the infra team's provisioning configuration on the port (the
	// PXE/iPXE boot network), so a host behind it can boot its ramdisk.
	CleanProvisioning CleanMode = "provisioning"
)

// CleanPolicy says what a clean port holds. A device's own default is never clean: an
// Open vSwitch port with no tag and no trunks carries every VLAN.
type CleanPolicy struct {
	// Mode is deconfigured (the default) or provisioning.
	// +optional
	Mode CleanMode `json:"mode,omitempty"`

	// ParkingVLAN is the isolated VLAN that deconfigured ports are parked on, as access
	// ports. Nothing but parked ports may use it.
	// +optional
	ParkingVLAN *VLANID `json:"parkingVLAN,omitempty"`

	// ProvisioningConfiguration names a SwitchPortConfiguration in the Switch's own
	// namespace (the infra team's) that provisioning-mode ports hold when clean.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ProvisioningConfiguration string `json:"provisioningConfiguration,omitempty"`
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

	// Clean overrides the Switch-wide clean policy for this port, field by field.
	// +optional
	Clean *CleanPolicy `json:"clean,omitempty"`

	// DiscoveryNamespaces overrides the Switch's discoveryNamespaces for this port.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	DiscoveryNamespaces []string `json:"discoveryNamespaces,omitempty"`
}

// SwitchSpec defines a switch and its ports.
// +kubebuilder:validation:XValidation:rule="has(self.clean.parkingVLAN)",message="clean.parkingVLAN is required: a clean port is parked on an isolated VLAN, never left on the switch's default",fieldPath=".clean.parkingVLAN",reason="FieldValueRequired"
type SwitchSpec struct {
	// Provider is the object holding the credentials and protocol of the switch.
	Provider ProviderRef `json:"provider"`

	// Clean is what the Switch's ports hold when no tenant configuration is applied: a
	// new port is brought to it before it is Idle, and cleaning returns a port to it.
	Clean CleanPolicy `json:"clean"`

	// ChassisMAC is the switch's LLDP chassis ID (a MAC address). A host whose inspection
	// saw this chassis on a NIC (status.hardware.nics[].lldp.switchID) is wired to the port
	// entry whose name is the LLDP port ID, with no HostLink entry needed, where
	// discoveryNamespaces allows the host's namespace.
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$`
	// +optional
	ChassisMAC string `json:"chassisMAC,omitempty"`
	// DiscoveryNamespaces are the namespaces of BareMetalHosts whose discovered wiring
	// (LLDP in status.hardware, spec.networkInterfaces[].switchPort) may drive this Switch's
	// ports. Whoever writes a host can write both, so by default (empty) no discovered
	// wiring is used: only HostLink entries are, and the rest is reported as unused.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	DiscoveryNamespaces []string `json:"discoveryNamespaces,omitempty"`
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
// +kubebuilder:printcolumn:name="Parking VLAN",type="integer",JSONPath=".spec.clean.parkingVLAN"
// +kubebuilder:printcolumn:name="Clean",type="string",JSONPath=".spec.clean.mode",priority=1
// +kubebuilder:printcolumn:name="Chassis",type="string",JSONPath=".spec.chassisMAC",priority=1
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

// AnnotationReleaseWithoutCleaning on a Switch, set to "true", lets its SwitchPorts that are
// being deleted go without cleaning their physical ports: the way out when a switch is gone
// for good and tenant namespaces must still be deleted. The ports keep whatever they held.
const AnnotationReleaseWithoutCleaning = "metal3.io/release-ports-without-cleaning"

func init() {
	SchemeBuilder.Register(&Switch{}, &SwitchList{})
}
