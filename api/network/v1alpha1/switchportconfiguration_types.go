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

// PortRange is one port (22) or an inclusive range (22-30) of TCP/UDP ports.
// +kubebuilder:validation:MaxLength=11
// +kubebuilder:validation:Pattern=`^(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})(-(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?$`
type PortRange string

// CIDR is a network in CIDR notation, e.g. 10.0.0.0/8 or fd00::/64.
// +kubebuilder:validation:MaxLength=43
// +kubebuilder:validation:Pattern=`^([0-9.]+|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)/[0-9]{1,3}$`
// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a valid CIDR, e.g. 10.0.0.0/8 or fd00::/64"
type CIDR string

// ACL is one access rule applied to the port's traffic.
type ACL struct {
	// Type is the address family the rule matches.
	// +kubebuilder:validation:Enum=ipv4;ipv6
	Type string `json:"type"`

	// Action taken on matching traffic.
	// +kubebuilder:validation:Enum=allow;deny
	Action string `json:"action"`

	// Protocol matched by the rule.
	// +kubebuilder:validation:Enum=TCP;UDP;ICMP;ALL
	Protocol string `json:"protocol"`

	// Src is the source network.
	// +optional
	Src CIDR `json:"src,omitempty"`

	// SrcPortRange is the source port or port range (TCP and UDP only).
	// +optional
	SrcPortRange PortRange `json:"srcPortRange,omitempty"`

	// Des is the destination network.
	// +optional
	Des CIDR `json:"des,omitempty"`

	// DesPortRange is the destination port or port range (TCP and UDP only).
	// +optional
	DesPortRange PortRange `json:"desPortRange,omitempty"`
}

// SwitchPortConfigurationSpec is the network configuration a tenant wants on a port.
type SwitchPortConfigurationSpec struct {
	// ACL lists the access rules applied on the port, in order.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	ACL []ACL `json:"acl,omitempty"`

	// UntaggedVLAN is the VLAN the port's untagged traffic is placed in (access VLAN).
	// +optional
	UntaggedVLAN *VLANID `json:"untaggedVLAN,omitempty"`

	// VLANs are the tagged VLANs the port carries (trunk), e.g. "2-10" or "1, 6-10".
	// +optional
	VLANs VLANRange `json:"vlans,omitempty"`

	// Disabled shuts the port down.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=switchportconfigurations,scope=Namespaced,categories=metal3;rackwire,shortName=swpc
// +kubebuilder:printcolumn:name="Untagged",type="integer",JSONPath=".spec.untaggedVLAN",description="Access VLAN"
// +kubebuilder:printcolumn:name="VLANs",type="string",JSONPath=".spec.vlans",description="Tagged VLANs"
// +kubebuilder:printcolumn:name="Disabled",type="boolean",JSONPath=".spec.disabled"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// SwitchPortConfiguration is a tenant's port configuration, linked to a SwitchPort through
// the port's spec.configuration.
type SwitchPortConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec SwitchPortConfigurationSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// SwitchPortConfigurationList contains a list of SwitchPortConfiguration.
type SwitchPortConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SwitchPortConfiguration `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SwitchPortConfiguration{}, &SwitchPortConfigurationList{})
}
