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

// Package ipalloc is the address allocation engine behind every rackwire IPAM front end
// (Metal3 IPPool/IPClaim, Cluster API IPAM, whereabouts node slices, KubeVirt IPAMClaims
// and the CNI plugin).
//
// A Pool is a set of address intervals (IPv4, IPv6 or both) minus exclusions. Free space
// is kept as a balanced tree of free intervals that knows how many addresses each subtree
// holds, so Allocate, Reserve and Release cost O(log n) in the number of intervals and
// nothing ever enumerates addresses: a /48 behaves like a /24.
//
// The package is deliberately free of Kubernetes imports (a test enforces it) so that the
// controllers, the webhooks and the CNI binary can share it.
package ipalloc
