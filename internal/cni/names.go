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
	"fmt"
	"math/big"
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

// Offset is a's distance from the pool's network address, the key of spec.allocations.
// IPv6 offsets may exceed 64 bits (whereabouts stops at /65; such keys are beyond what its
// binaries parse, and they skip them: its own ranges never reach them).
func Offset(pool netip.Prefix, a netip.Addr) string {
	return new(big.Int).Sub(addrInt(a), addrInt(pool.Masked().Addr())).String()
}

// AtOffset is the address at a spec.allocations key.
func AtOffset(pool netip.Prefix, key string) (netip.Addr, error) {
	off, ok := new(big.Int).SetString(key, 10)
	if !ok || off.Sign() < 0 {
		return netip.Addr{}, fmt.Errorf("allocation key %q is not an offset", key)
	}
	v := new(big.Int).Add(addrInt(pool.Masked().Addr()), off)
	n := pool.Addr().BitLen() / 8
	if v.BitLen() > n*8 {
		return netip.Addr{}, fmt.Errorf("allocation key %q is past %s", key, pool)
	}
	b := v.FillBytes(make([]byte, n))
	a, _ := netip.AddrFromSlice(b)
	if !pool.Contains(a) {
		return netip.Addr{}, fmt.Errorf("allocation key %q is past %s", key, pool)
	}
	return a, nil
}

func addrInt(a netip.Addr) *big.Int {
	return new(big.Int).SetBytes(a.AsSlice())
}
