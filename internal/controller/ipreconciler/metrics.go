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

package ipreconciler

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Kinds of records, the kind label of the counters.
const (
	kindAllocation  = "IPPoolAllocation"
	kindReservation = "OverlappingRangeIPReservation"
)

// Holder kinds, the holder label of the restored counter.
const (
	holderPod   = "Pod"
	holderClaim = "IPAMClaim"
)

// Event reasons.
const (
	// ReasonReaped is on the IPPool or reservation whose records of gone holders were removed.
	ReasonReaped = "AddressReaped"
	// ReasonRestored is on the pod or IPAMClaim whose reservation someone deleted and the
	// manager put back.
	ReasonRestored = "ReservationRestored"
	// ReasonHeldTwice is on the pod whose pool entry's address another holder's reservation
	// names (twice.go).
	ReasonHeldTwice = "AddressHeldTwice"
)

var (
	reaped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackwire_ipreconciler_reaped_total",
		Help: "Records of gone holders removed from whereabouts' objects, by network_name (\"\" for networks without one), " +
			"kind (IPPoolAllocation, OverlappingRangeIPReservation) and reason (PodGone, PodReplaced, PodFinished, NodeGone).",
	}, []string{"network_name", "kind", "reason"})
	restored = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackwire_ipreconciler_reservations_restored_total",
		Help: "OverlappingRangeIPReservations of live holders that someone else deleted and the manager re-created, " +
			"by network_name and holder (Pod, IPAMClaim).",
	}, []string{"network_name", "holder"})
	heldTwice = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackwire_ipreconciler_addresses_held_twice_total",
		Help: "Addresses a live pod's IPPool allocation records while their reservation names another holder, " +
			"each pair counted once, by network_name.",
	}, []string{"network_name"})
)

func init() { metrics.Registry.MustRegister(reaped, restored, heldTwice) }
