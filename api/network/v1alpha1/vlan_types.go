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

// VLANRange is the VLAN range syntax of the Metal3 proposal: comma-separated ids and
// inclusive ranges, e.g. "1, 6-10". The pattern admits ids 1..4094 only, so a typo such as
// 5000 is refused by the apiserver before any webhook runs.
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:Pattern=`^\s*(409[0-4]|40[0-8][0-9]|[1-3][0-9]{3}|[1-9][0-9]{0,2})(\s*-\s*(409[0-4]|40[0-8][0-9]|[1-3][0-9]{3}|[1-9][0-9]{0,2}))?(\s*,\s*(409[0-4]|40[0-8][0-9]|[1-3][0-9]{3}|[1-9][0-9]{0,2})(\s*-\s*(409[0-4]|40[0-8][0-9]|[1-3][0-9]{3}|[1-9][0-9]{0,2}))?)*\s*$`
type VLANRange string

// VLANID is one 802.1Q VLAN id.
// +kubebuilder:validation:Minimum=1
// +kubebuilder:validation:Maximum=4094
type VLANID int32
