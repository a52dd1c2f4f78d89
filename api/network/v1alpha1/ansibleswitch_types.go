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

// SecretRef names a Secret in the referring object's namespace. Cross-namespace references
// are not offered: they would let a Switch owner read another team's credentials.
type SecretRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// AnsibleSwitchSpec is how Ansible (the network-runner role) reaches a switch.
// +kubebuilder:validation:XValidation:rule="self.os != 'openvswitch' || (has(self.bridge) && size(self.bridge) > 0)",message="bridge is required when os is openvswitch",fieldPath=".bridge",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="has(self.hostKeys) != (has(self.insecureIgnoreHostKey) && self.insecureIgnoreHostKey)",message="set exactly one of hostKeys (the switch's SSH host keys) and insecureIgnoreHostKey: true",fieldPath=".hostKeys",reason="FieldValueRequired"
type AnsibleSwitchSpec struct {
	// OS is the switch's network OS, as named by the network-runner role's providers: one of
	// cumulus, dellemc.os9.os9, dellos10, enos, eos, junos, nxos, openvswitch. Others (the
	// seed's example fos among them) are refused: rackwire has no playbooks for them.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self in ['cumulus', 'dellemc.os9.os9', 'dellos10', 'enos', 'eos', 'junos', 'nxos', 'openvswitch']",messageExpression="'os ' + self + ' is not supported: rackwire drives switches with the network-runner role and the Ansible collections, which cover cumulus, dellemc.os9.os9, dellos10, enos, eos, junos, nxos and openvswitch only (FortiOS, fos, has no network-runner provider)'",reason="FieldValueInvalid"
	OS string `json:"os"`

	// IP is the address or DNS name of the switch's management interface.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*|[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*)$`
	IP string `json:"ip"`

	// Port is the SSH port of the switch.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=22
	// +optional
	Port int32 `json:"port,omitempty"`

	// Bridge is the Open vSwitch bridge holding the ports; only for os openvswitch.
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._-]*$`
	// +optional
	Bridge string `json:"bridge,omitempty"`

	// HostKeys are the switch's SSH host public keys, as in known_hosts without the host
	// name ("ssh-ed25519 AAAA..."). The driver refuses a switch that presents another key.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=8192
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9@.-]+ [A-Za-z0-9+/]+=*$`
	// +listType=atomic
	// +optional
	HostKeys []string `json:"hostKeys,omitempty"`

	// InsecureIgnoreHostKey accepts whatever host key the switch presents, so a machine in
	// the middle could take the credentials. For labs only; production sets hostKeys.
	// +optional
	InsecureIgnoreHostKey bool `json:"insecureIgnoreHostKey,omitempty"`

	// CredentialsSecret holds the login: keys "username" and "password", or "username" and
	// "ssh-privatekey".
	CredentialsSecret SecretRef `json:"credentialsSecret"`
}

// AnsibleSwitchStatus is the observed state of an AnsibleSwitch.
type AnsibleSwitchStatus struct {
	// HeldSecret is the credentials Secret that the operator holds with its in-use finalizer
	// while Switches use this AnsibleSwitch, so it can release it after a rename.
	// +optional
	HeldSecret string `json:"heldSecret,omitempty"`

	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready is true when the credentials resolve and the switch answered.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ansibleswitches,scope=Namespaced,categories=metal3;rackwire,shortName=asw
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="OS",type="string",JSONPath=".spec.os"
// +kubebuilder:printcolumn:name="IP",type="string",JSONPath=".spec.ip"
// +kubebuilder:printcolumn:name="Port",type="integer",JSONPath=".spec.port"
// +kubebuilder:printcolumn:name="Bridge",type="string",JSONPath=".spec.bridge",priority=1
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// AnsibleSwitch is the provider of a Switch driven by Ansible playbooks over SSH.
type AnsibleSwitch struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AnsibleSwitchSpec   `json:"spec,omitempty"`
	Status AnsibleSwitchStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AnsibleSwitchList contains a list of AnsibleSwitch.
type AnsibleSwitchList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AnsibleSwitch `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AnsibleSwitch{}, &AnsibleSwitchList{})
}
