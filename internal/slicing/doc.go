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

// Package slicing cuts a network's range into equal node slices, IPv4 and IPv6, and hands
// them to nodes: whereabouts' arithmetic (the slices of a range are its aligned subnets of
// the slice size, listed from the lowest), without ever enumerating a range (an IPv6 /64 cut
// into /80s has 65,536 slices and is never listed), honouring range_start, range_end and
// exclude, and never handing a node a slice in which another node's IPPool still holds
// addresses. It imports only the standard library.
package slicing
