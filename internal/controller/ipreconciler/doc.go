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

// Package ipreconciler is rackwire's own reconciler of whereabouts' allocation records, run
// in the manager instead of whereabouts' ip-control-loop, for every network whose NADs use
// rackwire's IPAM (ipam.type "rackwire").
//
// Its work queue holds reservation scopes (network_name; the networks without one share the
// unprefixed scope, as in whereabouts). For each it:
//   - reaps IPPool allocations and OverlappingRangeIPReservations whose holder is gone: its
//     pod deleted, re-created under the same name (another UID, or created after the
//     address was reserved), finished, or on a deleted Node (a live pod's reservation that no
//     allocation matches stays: its entry may be waiting for the node's flusher, and the
//     reservation is the only lock until then). Only after the holder has been seen gone for the
//     grace period, and after a read past the cache confirms it. An IPAMClaim's reservation
//     is never reaped: the claim releases it.
//   - puts back the reservation of a live holder (an allocation whose pod is alive, an
//     IPAMClaim's address) that someone deleted: whereabouts' DEL deletes by name, its
//     ip-control-loop deletes the reservations of networks with network_name and of podrefs
//     that are not pods. The reservation is the lock the CNI plugins take; without it the
//     next ADD could hand the address out again.
//
// Allocations are removed before their reservation, the order of a CNI DEL, so that an
// address is never free in one record while held in the other. Every decision is read from
// the informer cache; the writes carry preconditions (a JSON-patch test of the allocation,
// the reservation's UID and resourceVersion).
package ipreconciler
