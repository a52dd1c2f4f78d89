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

// Package cni is rackwire's CNI IPAM plugin (ipam type "rackwire"): a drop-in for the
// whereabouts binary that reads the same configuration keys and records its allocations in
// the same whereabouts.cni.cncf.io objects (IPPool, OverlappingRangeIPReservation), so both
// binaries can share a network.
//
// An address is tried only when the pool (the node's view of it, or the pool read) and the
// network's IPAMClaims (claimguard.go) leave it free: others delete reservations they do not
// own, so a reservation alone does not prove an address free. An allocation is then two
// writes, in an order that never hands one address out twice:
//  1. create the address's OverlappingRangeIPReservation: the create is the cluster-wide
//     lock (AlreadyExists means another pod, a whereabouts binary or an IPAMClaim holds it;
//     with enable_overlapping_ranges false there is none, and the pool write is the lock);
//  2. add the address to the pool's spec.allocations with a JSON patch whose test makes it
//     fail if the offset is already taken, instead of whereabouts' whole-pool
//     resourceVersion test, so ADDs of different addresses never conflict.
//
// Release goes the other way round (pool entry, then reservation), so a crash in between
// leaves an address blocked, never free in one record and held in the other. ADDs and DELs
// of one pool on one node queue on a node-local file lock: no Lease, no cluster-wide lock.
// A node-local record per attachment (the state directory, one per network keyed by its
// pools: state.go) lets DEL and GC undo exactly what an interrupted ADD wrote. Paths a
// configuration names stay under the DaemonSet's directories (roots.go).
//
// The package's own copies of the Event and Lease types are not CRDs:
// +kubebuilder:skip
package cni
