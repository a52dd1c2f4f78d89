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

package ipalloc

import "math/bits"

// uint128 holds an address or an address count. IPv6 needs all 128 bits, and math/big
// would put an allocation on every tree update.
type uint128 struct {
	hi, lo uint64
}

var maxUint128 = uint128{^uint64(0), ^uint64(0)}

func u64(v uint64) uint128 { return uint128{lo: v} }

func (a uint128) isZero() bool { return a.hi == 0 && a.lo == 0 }

func (a uint128) cmp(b uint128) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

func (a uint128) less(b uint128) bool { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo) }

// add wraps on overflow; callers that can overflow use addOK.
func (a uint128) add(b uint128) uint128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return uint128{hi, lo}
}

func (a uint128) addOK(b uint128) (uint128, bool) {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, c := bits.Add64(a.hi, b.hi, c)
	return uint128{hi, lo}, c == 0
}

func (a uint128) sub(b uint128) uint128 {
	lo, borrow := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, borrow)
	return uint128{hi, lo}
}

func (a uint128) inc() uint128 {
	lo, c := bits.Add64(a.lo, 1, 0)
	return uint128{a.hi + c, lo}
}

func (a uint128) dec() uint128 {
	lo, borrow := bits.Sub64(a.lo, 1, 0)
	return uint128{a.hi - borrow, lo}
}

// span is the number of addresses in [a, b]; it wraps to zero for the whole IPv6 space,
// which NewPool refuses.
func span(a, b uint128) uint128 { return b.sub(a).inc() }
