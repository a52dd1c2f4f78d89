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

package slicing

import (
	"math/bits"
	"net/netip"
)

// u128 is an address as a number: IPv4 in the low 32 bits.
type u128 struct{ hi, lo uint64 }

func fromAddr(a netip.Addr) u128 {
	if a.Is4() {
		b := a.As4()
		return u128{lo: uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])}
	}
	b := a.As16()
	var x u128
	for i := range 8 {
		x.hi = x.hi<<8 | uint64(b[i])
		x.lo = x.lo<<8 | uint64(b[i+8])
	}
	return x
}

func (x u128) addr(v4 bool) netip.Addr {
	if v4 {
		return netip.AddrFrom4([4]byte{byte(x.lo >> 24), byte(x.lo >> 16), byte(x.lo >> 8), byte(x.lo)})
	}
	var b [16]byte
	for i := range 8 {
		b[7-i] = byte(x.hi >> (8 * i))
		b[15-i] = byte(x.lo >> (8 * i))
	}
	return netip.AddrFrom16(b)
}

func (x u128) add(y u128) u128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	hi, _ := bits.Add64(x.hi, y.hi, c)
	return u128{hi, lo}
}

func (x u128) sub(y u128) u128 {
	lo, b := bits.Sub64(x.lo, y.lo, 0)
	hi, _ := bits.Sub64(x.hi, y.hi, b)
	return u128{hi, lo}
}

// shl shifts left by n (0..127).
func (x u128) shl(n int) u128 {
	switch {
	case n == 0:
		return x
	case n >= 64:
		return u128{hi: x.lo << (n - 64)}
	default:
		return u128{hi: x.hi<<n | x.lo>>(64-n), lo: x.lo << n}
	}
}

// shr shifts right by n (0..127).
func (x u128) shr(n int) u128 {
	switch {
	case n == 0:
		return x
	case n >= 64:
		return u128{lo: x.hi >> (n - 64)}
	default:
		return u128{hi: x.hi >> n, lo: x.lo>>n | x.hi<<(64-n)}
	}
}
