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

package cni

import (
	"net/netip"

	"github.com/rackwire/rackwire/internal/cniconf"
)

// PoolName names the IPPool of a range (or of a node's slice, node set), as whereabouts does.
func PoolName(network, node string, r netip.Prefix) string {
	return cniconf.PoolName(network, node, r)
}

// ReservationName names an address's OverlappingRangeIPReservation, as whereabouts does.
func ReservationName(network string, a netip.Addr) string {
	return cniconf.ReservationName(network, a)
}

// Offset is a's distance from the pool's network address, the key of spec.allocations, as
// whereabouts v0.9.4 writes and reads it (cniconf.Offset).
func Offset(pool netip.Prefix, a netip.Addr) string { return cniconf.Offset(pool, a) }

// AtOffset is the address at a spec.allocations key (cniconf.AtOffset).
func AtOffset(pool netip.Prefix, key string) (netip.Addr, error) { return cniconf.AtOffset(pool, key) }
