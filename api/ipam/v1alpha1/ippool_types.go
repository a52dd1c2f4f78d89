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

// AllocationStrategy says how a pool picks a free address for a claim.
// +kubebuilder:validation:Enum=random;sequential
type AllocationStrategy string

const (
	// AllocationRandom picks uniformly among the free addresses of the whole pool.
	AllocationRandom AllocationStrategy = "random"
	// AllocationSequential picks the lowest free address of the first entry, in the
	// order the entries are given, that has one: what ip-address-manager does, and what a
	// pool without a strategy does.
	AllocationSequential AllocationStrategy = "sequential"
)

// Pool is one range of an IPPool. Give start and end, or a subnet, or both: with a subnet
// only, the range is the subnet's first to last usable address; with start and a subnet,
// it runs from start to the subnet's last usable address.
type Pool struct {
	// Start is the first address of the range.
	// +optional
	Start *IPAddressStr `json:"start,omitempty"`

	// End is the last address of the range, inclusive.
	// +optional
	End *IPAddressStr `json:"end,omitempty"`

	// Subnet bounds the range and tells which network the addresses belong to.
	// +optional
	Subnet *IPSubnetStr `json:"subnet,omitempty"`

	// Prefix is the prefix length given to addresses of this range; it overrides spec.prefix.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int32 `json:"prefix,omitempty"`

	// Gateway given to addresses of this range; it overrides spec.gateway.
	// +optional
	Gateway *IPAddressStr `json:"gateway,omitempty"`

	// DNSServers given to addresses of this range, of the range's family; they override
	// spec.dnsServers.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	DNSServers []IPAddressStr `json:"dnsServers,omitempty"`
}

// IPPoolSpec defines the addresses a pool hands out and what comes with them.
type IPPoolSpec struct {
	// ClusterName is the Cluster API cluster the pool belongs to; claims of a paused
	// cluster are not reconciled.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClusterName *string `json:"clusterName,omitempty"`

	// Pools lists the address ranges; they may be sparse, and are all of one family (the
	// webhook refuses a pool of both, which ip-address-manager accepted; such a pool is
	// still served, one IPAddress name per address of either family).
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Pools []Pool `json:"pools,omitempty"`

	// Prefix is the default prefix length of the addresses.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Prefix int32 `json:"prefix,omitempty"`

	// Gateway is the default gateway of the addresses.
	// +optional
	Gateway *IPAddressStr `json:"gateway,omitempty"`

	// DNSServers are the default DNS servers of the addresses of ranges without their
	// own, of those ranges' family.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	DNSServers []IPAddressStr `json:"dnsServers,omitempty"`

	// PreAllocations maps a claim name to the address that claim must get.
	// +kubebuilder:validation:MaxProperties=4096
	// +optional
	PreAllocations map[string]IPAddressStr `json:"preAllocations,omitempty"`

	// NamePrefix starts the name of every IPAddress of this pool
	// (<namePrefix>-<address with . and : replaced by ->). It must not change while
	// addresses exist, or their leases are lost.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	NamePrefix string `json:"namePrefix"`

	// AllocationStrategy is how a free address is chosen: sequential or random. The
	// webhook sets sequential on a pool created without it; a pool stored without it (one
	// ip-address-manager wrote before the field existed) behaves as sequential too. It has
	// no schema default, since a schema default would be applied to such stored pools too.
	// +optional
	AllocationStrategy AllocationStrategy `json:"allocationStrategy,omitempty"`

	// ExcludedAddresses are never handed out: single addresses, start-end ranges or CIDRs.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	ExcludedAddresses []IPRangeStr `json:"excludedAddresses,omitempty"`
}

// IPPoolUsage counts the addresses of a pool. The counts saturate at 2^63-1, which only an
// IPv6 range of /65 or larger reaches.
type IPPoolUsage struct {
	// Total is the number of addresses the pool can hand out.
	Total int64 `json:"total"`
	// Used is the number of addresses allocated or pre-allocated.
	Used int64 `json:"used"`
	// Free is Total minus Used.
	Free int64 `json:"free"`

	// The int64 counts above are ip-address-manager's and saturate at 2^63-1, which an IPv6
	// /64 passes; these say the same for people, exactly up to 9999999, else as a power of
	// two ("~2^64") or with two significant digits ("1.2e7"). Rackwire only.

	// Size is Total, readable.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Size string `json:"size,omitempty"`
	// FreeSize is Free, readable.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	FreeSize string `json:"freeSize,omitempty"`
}

// IPPoolStatus is a cache rebuilt from the IPAddress objects; losing it loses nothing.
type IPPoolStatus struct {
	// LastUpdated is when the status was last written.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// Atomic: only the controller writes it, and tracking who set each entry put one
	// managedFields entry per address in the object, nearly doubling what every write of a
	// large pool cost the apiserver (test/bench).

	// Indexes maps each claim name to its address, under ip-address-manager's name for it.
	// Plain strings: the controller writes them from validated IPAddresses, and a large
	// pool would exceed the CEL cost budget. Past a size (see the IndexesOmitted condition)
	// it is no longer written; the IPAddresses carry the pool label instead.
	// +optional
	// +mapType=atomic
	Indexes map[string]string `json:"indexes,omitempty"`

	// Usage counts the pool's addresses.
	// +optional
	Usage *IPPoolUsage `json:"usage,omitempty"`

	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready is true while the spec is valid and addresses are free.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io="
// +kubebuilder:metadata:labels="clusterctl.cluster.x-k8s.io/move-hierarchy="
// +kubebuilder:resource:path=ippools,scope=Namespaced,categories=cluster-api;rackwire,shortName=ipp;ippool;m3ipp;m3ippool;m3ippools;metal3ipp;metal3ippool;metal3ippools
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster the pool belongs to"
// +kubebuilder:printcolumn:name="Strategy",type="string",JSONPath=".spec.allocationStrategy",description="How free addresses are picked"
// +kubebuilder:printcolumn:name="Size",type="string",JSONPath=".status.usage.size",description="Addresses the pool can hand out (~2^64 for a /64)"
// +kubebuilder:printcolumn:name="Used",type="integer",JSONPath=".status.usage.used",description="Addresses in use"
// +kubebuilder:printcolumn:name="Free",type="string",JSONPath=".status.usage.freeSize",description="Addresses still free"
// +kubebuilder:printcolumn:name="Total",type="integer",JSONPath=".status.usage.total",description="Addresses the pool can hand out (saturates at 2^63-1)",priority=1
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// IPPool is a set of address ranges that IPClaims (Metal3) and IPAddressClaims (Cluster API)
// draw from.
type IPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   IPPoolSpec   `json:"spec,omitempty"`
	Status IPPoolStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// IPPoolList contains a list of IPPool.
type IPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IPPool `json:"items"`
}

func init() {
	SchemeBuilder.Register(&IPPool{}, &IPPoolList{})
}
