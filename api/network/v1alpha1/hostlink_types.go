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
	"k8s.io/apimachinery/pkg/types"
)

// ObjectRef names an object; the namespace defaults to the referring object's.
type ObjectRef struct {
	// Kind of the object, as the seed's references spell it; informational, the field
	// holding the reference fixes the kind.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace of the object.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// HostPort is one NIC of a host as the infra team cabled it: the seed's
// BareMetalHost.spec.ports entry, which BMO v0.13.2 does not have.
type HostPort struct {
	// MAC is the NIC's MAC address, as inspection reports it in
	// BareMetalHost.status.hardware.nics[].mac.
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$`
	MAC string `json:"mac"`
	// Port is the SwitchPort the NIC is cabled to.
	Port ObjectRef `json:"port"`
	// ProvisioningConfiguration is the SwitchPortConfiguration (in the SwitchPort's
	// namespace) the port carries while the host boots its ramdisk: registering,
	// inspecting, preparing, provisioning, deprovisioning. Empty: the port's clean state.
	// +optional
	ProvisioningConfiguration *ObjectRef `json:"provisioningConfiguration,omitempty"`
	// Configuration is what the port carries once the host is provisioned when no
	// Metal3Machine names one for this NIC (a host the infra team provisions itself).
	// It lives in the SwitchPort's namespace. Empty: the port's clean state.
	// +optional
	Configuration *ObjectRef `json:"configuration,omitempty"`
}

// HostLinkSpec is the infra team's wiring of a BareMetalHost of the same name and namespace.
type HostLinkSpec struct {
	// Ports are the host's cabled NICs. NICs found by LLDP during inspection, or described
	// in the host's spec.networkInterfaces, need no entry here.
	// +listType=map
	// +listMapKey=mac
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Ports []HostPort `json:"ports,omitempty"`
}

// AnnotationConsumerHost is CAPM3's annotation on a Metal3Machine naming the host it
// consumes, "<namespace>/<name>": a consumerRef counts only when the consumer names the host
// back.
const AnnotationConsumerHost = "metal3.io/BareMetalHost"

// HostNetwork is what a host's ports carry in a provisioning state.
// +kubebuilder:validation:Enum=provisioning;tenant;clean
type HostNetwork string

const (
	// NetworkProvisioning is the provisioning network: the host boots its ramdisk.
	NetworkProvisioning HostNetwork = "provisioning"
	// NetworkTenant is the consumer's networks: the host is provisioned.
	NetworkTenant HostNetwork = "tenant"
	// NetworkClean is the ports' clean state: the host is gone or detached.
	NetworkClean HostNetwork = "clean"
)

// WiringSource says who said a NIC is cabled to a port.
// +kubebuilder:validation:Enum=spec;lldp;networkInterfaces
type WiringSource string

const (
	// WiringSpec comes from the HostLink's spec.ports.
	WiringSpec WiringSource = "spec"
	// WiringLLDP comes from inspection: the NIC's LLDP chassis and port ID matched a
	// Switch's chassisMAC and one of its port entries.
	WiringLLDP WiringSource = "lldp"
	// WiringNetworkInterfaces comes from the host's spec.networkInterfaces (newer BMO).
	WiringNetworkInterfaces WiringSource = "networkInterfaces"
)

// HostPortStatus is one wired port of the host and whether it carries what it should.
type HostPortStatus struct {
	// NIC is the host's interface name, when inspection reported it.
	// +optional
	NIC string `json:"nic,omitempty"`
	// MAC of the NIC.
	// +optional
	MAC string `json:"mac,omitempty"`
	// Source of the wiring.
	Source WiringSource `json:"source"`
	// SwitchPort the NIC is cabled to.
	SwitchPort ObjectRef `json:"switchPort"`
	// Want is the configuration the port should carry now; empty: its clean state.
	// +optional
	Want *ConfigurationRef `json:"want,omitempty"`
	// Carries is "yes" when the port carries Want, else what it is doing instead.
	// +optional
	Carries string `json:"carries,omitempty"`
	// Ready is true when the port carries Want.
	Ready bool `json:"ready"`
	// Message says why the port does not carry Want, when it does not.
	// +optional
	Message string `json:"message,omitempty"`
	// Since is when this host began to hold the port: between hosts the first holder
	// keeps it.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// HeldBy is the HostLink of the host that holds the port instead of this one; this
	// host is held until that one lets the port go.
	// +optional
	HeldBy *ObjectRef `json:"heldBy,omitempty"`
}

// SeenWiring is wiring rackwire discovered but does not use.
type SeenWiring struct {
	// NIC is the host's interface name, when inspection reported it.
	// +optional
	NIC string `json:"nic,omitempty"`
	// MAC of the NIC.
	// +optional
	MAC string `json:"mac,omitempty"`
	// Source of the wiring.
	Source WiringSource `json:"source"`
	// SwitchPort the NIC would be cabled to.
	SwitchPort ObjectRef `json:"switchPort"`
	// Reason says why the wiring is not used.
	Reason string `json:"reason"`
}

// UnknownPort is a port a deleted host let go of before it was confirmed clean: it was
// unlinked, and its SwitchPort cleans it as soon as the switch is reachable.
type UnknownPort struct {
	// SwitchPort that was unlinked.
	SwitchPort ObjectRef `json:"switchPort"`
	// HostUID is the host that left it.
	// +optional
	HostUID types.UID `json:"hostUID,omitempty"`
	// Message is what the port reported when the host went.
	// +optional
	Message string `json:"message,omitempty"`
}

// HostLinkStatus is where the host's ports are.
type HostLinkStatus struct {
	// HostState is the BareMetalHost's provisioning state the status was computed for.
	// +optional
	HostState string `json:"hostState,omitempty"`
	// Network is what the host's ports should carry in that state.
	// +optional
	Network HostNetwork `json:"network,omitempty"`
	// Consumer is the Metal3Machine consuming the host (its consumerRef), whose namespace
	// supplies the tenant configurations.
	// +optional
	Consumer *ObjectRef `json:"consumer,omitempty"`
	// Held is true while rackwire pauses the host (BMO's paused annotation) until its
	// ports carry what the next state needs.
	// +optional
	Held bool `json:"held,omitempty"`
	// ReadyPorts counts the ports that carry what they should, as "ready/total".
	// +optional
	ReadyPorts string `json:"readyPorts,omitempty"`
	// Ports are the host's wired ports.
	// +optional
	Ports []HostPortStatus `json:"ports,omitempty"`
	// HostUID is the BareMetalHost the entries were first used for. A later host of the
	// same name gets the entries only for the MACs it has: a name is not an identity.
	// +optional
	HostUID types.UID `json:"hostUID,omitempty"`
	// Unused is wiring seen (spec.networkInterfaces, LLDP) but not used: no Switch allows
	// discovered wiring for the host's namespace there, or a HostLink entry names the port.
	// +optional
	Unused []SeenWiring `json:"unused,omitempty"`
	// Unknown are ports a deleted host let go of (release annotation) before they were
	// confirmed clean.
	// +optional
	Unknown []UnknownPort `json:"unknown,omitempty"`
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready is true when every port carries what the host's state needs;
	// Held says why rackwire holds the host.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=hostlinks,scope=Namespaced,categories=metal3;rackwire,shortName=hl
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Host State",type="string",JSONPath=".status.hostState"
// +kubebuilder:printcolumn:name="Network",type="string",JSONPath=".status.network",description="What the ports should carry"
// +kubebuilder:printcolumn:name="Ports",type="string",JSONPath=".status.ports[*].switchPort.name",description="The host's SwitchPorts"
// +kubebuilder:printcolumn:name="Want",type="string",JSONPath=".status.ports[*].want.name",description="Configurations the ports should carry (none: clean)"
// +kubebuilder:printcolumn:name="Carries",type="string",JSONPath=".status.ports[*].carries",description="Whether each port carries it"
// +kubebuilder:printcolumn:name="Ready Ports",type="string",JSONPath=".status.readyPorts"
// +kubebuilder:printcolumn:name="Held",type="boolean",JSONPath=".status.held"
// +kubebuilder:printcolumn:name="Consumer",type="string",JSONPath=".status.consumer.name",priority=1
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// HostLink ties a BareMetalHost of the same name and namespace to its SwitchPorts: the
// infra team's wiring in spec, and in status the configuration each port should carry in
// the host's provisioning state and whether it does. rackwire creates an empty one for a
// host whose wiring it discovers.
type HostLink struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HostLinkSpec   `json:"spec,omitempty"`
	Status HostLinkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// HostLinkList contains a list of HostLink.
type HostLinkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostLink `json:"items"`
}

// Annotations of the host-link workflow.
const (
	// AnnotationNetworkConfiguration on a Metal3Machine carries the seed's
	// spec.networkConfiguration, which CAPM3 does not have, as JSON:
	// [{"configurationRef":{"name":"nc1"},"nicHint":{"name":"eth0"}}]. CAPI copies a
	// Metal3MachineTemplate's spec.template.metadata.annotations to every Metal3Machine.
	AnnotationNetworkConfiguration = "rackwire.metal3.io/network-configuration"
	// PausedByRackwire is the value of BMO's paused annotation when rackwire holds a host
	// for its ports; rackwire never touches the annotation under any other value.
	PausedByRackwire = "rackwire.metal3.io/ports"
	// AnnotationReleaseHost on a HostLink, set to "true", releases a host held for ports
	// that cannot get there (a failed switch): the way out after reading the Held condition.
	// A deleted host goes after one cleaning attempt; its ports are recorded as unknown.
	AnnotationReleaseHost = "rackwire.metal3.io/release-host"
	// AnnotationPortHolder on a SwitchPort records the HostLink that took the port for its
	// host, "<namespace>/<name>/<uid>/<source>". The host-link controller writes it with the
	// SwitchPort's resourceVersion as a precondition before it drives the port, so two hosts
	// claiming one port at once cannot both drive it: the second write fails and its host
	// finds the port taken. It goes when the holder's clean ends or the holder releases it.
	AnnotationPortHolder = "rackwire.metal3.io/held-by"
	// LabelWired marks the BareMetalHosts rackwire wires: the host webhook fails closed for
	// them (config/webhook/host.yaml), so a wired host cannot change the network it needs
	// while the manager is down.
	LabelWired = "rackwire.metal3.io/wired"
)

func init() {
	SchemeBuilder.Register(&HostLink{}, &HostLinkList{})
}
