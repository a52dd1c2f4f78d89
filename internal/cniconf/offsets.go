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

package cniconf

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"net/netip"
	"strconv"
)

// Offset is a's distance from the pool's network address, the key of spec.allocations.
// whereabouts v0.9.4 reads a key with strconv.ParseInt(key, 10, 64) and adds uint64(it), so an
// offset from 2^63 to 2^64-1 is written as the negative int64 of the same bits, which it reads
// back as that offset (it writes them in unsigned decimal, which it then cannot read). IPv6
// offsets past 64 bits (whereabouts stops at /65) are written in full decimal; whereabouts
// skips those keys.
func Offset(pool netip.Prefix, a netip.Addr) string {
	// Every ADD turns each key of its node's pool into an address: offsets that fit in 64
	// bits (all of IPv4, any slice up to a /64) skip big.Int.
	hi, lo := split(a)
	bhi, blo := split(pool.Masked().Addr())
	dlo, borrow := bits.Sub64(lo, blo, 0)
	if dhi, _ := bits.Sub64(hi, bhi, borrow); dhi == 0 && a.BitLen() == pool.Addr().BitLen() && !a.Less(pool.Masked().Addr()) {
		if dlo >= 1<<63 {
			return strconv.FormatInt(int64(dlo), 10)
		}
		return strconv.FormatUint(dlo, 10)
	}
	return new(big.Int).Sub(addrInt(a), addrInt(pool.Masked().Addr())).String()
}

// split is an address as two 64-bit halves, IPv4 in the low one.
func split(a netip.Addr) (hi, lo uint64) {
	if a.Is4() {
		b := a.As4()
		return 0, uint64(binary.BigEndian.Uint32(b[:]))
	}
	b := a.As16()
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}

// AtOffset is the address at a spec.allocations key.
func AtOffset(pool netip.Prefix, key string) (netip.Addr, error) {
	off, err := strconv.ParseUint(key, 10, 64)
	if neg, nerr := strconv.ParseInt(key, 10, 64); err != nil && nerr == nil && neg < 0 {
		// whereabouts' reading of a negative key: the offset of the same 64 bits.
		off, err = uint64(neg), nil
	}
	if err == nil && key[0] != '+' {
		hi, lo := split(pool.Masked().Addr())
		lo, carry := bits.Add64(lo, off, 0)
		hi, over := bits.Add64(hi, 0, carry)
		var a netip.Addr
		if pool.Addr().Is4() {
			if hi != 0 || lo > 0xffffffff {
				return netip.Addr{}, fmt.Errorf("allocation key %q is past %s", key, pool)
			}
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], uint32(lo))
			a = netip.AddrFrom4(b)
		} else {
			if over != 0 {
				return netip.Addr{}, fmt.Errorf("allocation key %q is past %s", key, pool)
			}
			var b [16]byte
			binary.BigEndian.PutUint64(b[:8], hi)
			binary.BigEndian.PutUint64(b[8:], lo)
			a = netip.AddrFrom16(b)
		}
		if !pool.Contains(a) {
			return netip.Addr{}, fmt.Errorf("allocation key %q is past %s", key, pool)
		}
		return a, nil
	}
	wide, ok := new(big.Int).SetString(key, 10)
	if !ok || wide.Sign() < 0 {
		return netip.Addr{}, fmt.Errorf("allocation key %q is not an offset", key)
	}
	v := wide.Add(addrInt(pool.Masked().Addr()), wide)
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
