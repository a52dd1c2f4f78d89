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

// The patterns below only check the shape of an address so that junk is refused with a
// readable message; the CEL rules (isIP / isCIDR) are the exact check. Both bound the
// length so the apiserver can cost the CEL rules.

// IPAddressStr is an IPv4 or IPv6 address in its textual form, e.g. 192.168.0.10 or fd00::10.
// +kubebuilder:validation:MaxLength=39
// +kubebuilder:validation:Pattern=`^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$`
// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be a valid IPv4 or IPv6 address"
type IPAddressStr string

// IPSubnetStr is a subnet in CIDR notation, e.g. 192.168.0.0/24 or fd00::/64.
// +kubebuilder:validation:MaxLength=43
// +kubebuilder:validation:Pattern=`^([0-9.]+|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)/[0-9]{1,3}$`
// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a valid CIDR, e.g. 192.168.0.0/24 or fd00::/64"
type IPSubnetStr string

// IPRangeStr names addresses to keep out of a pool: a single address (192.168.0.5), an
// inclusive range of one family (192.168.0.5-192.168.0.9) or a CIDR (192.168.0.16/28).
// +kubebuilder:validation:MaxLength=80
// +kubebuilder:validation:Pattern=`^[0-9A-Fa-f:.]+(-[0-9A-Fa-f:.]+|/[0-9]{1,3})?$`
type IPRangeStr string
