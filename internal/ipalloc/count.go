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

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Count is an exact number of addresses. It is 128 bits wide: NewPool refuses pools of
// 2^128 addresses or more, so a Count never wraps. Use Big for the exact value and
// Uint64 or Int64 where a saturating machine integer is good enough (status fields).
type Count struct {
	v uint128
}

// IsZero reports whether c is zero.
func (c Count) IsZero() bool { return c.v.isZero() }

// Cmp returns -1, 0 or +1 as c is lower than, equal to or greater than d.
func (c Count) Cmp(d Count) int { return c.v.cmp(d.v) }

// Uint64 returns c, saturated at math.MaxUint64.
func (c Count) Uint64() uint64 {
	if c.v.hi != 0 {
		return math.MaxUint64
	}
	return c.v.lo
}

// Int64 returns c, saturated at math.MaxInt64 (the Kubernetes status counters are int64).
func (c Count) Int64() int64 {
	if c.v.hi != 0 || c.v.lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(c.v.lo)
}

// Big returns c exactly.
func (c Count) Big() *big.Int {
	b := new(big.Int).SetUint64(c.v.hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(c.v.lo))
}

func (c Count) String() string {
	if c.v.hi == 0 {
		return strconv.FormatUint(c.v.lo, 10)
	}
	return c.Big().String()
}

// Counts describes the occupation of a pool. Total = Used + Free always holds.
type Counts struct {
	Total, Used, Free Count
}

// readableExact is the largest count Readable writes out in full: seven digits still read at
// a glance in a kubectl column, twenty (an IPv6 /64) do not.
const readableExact = 9_999_999

// Readable returns c for people: in full up to readableExact, as a power of two where it is
// within a thousandth of one ("2^64" exactly, "~2^64" for a /64 less its gateway), else
// with two significant digits ("1.2e7"). The status fields that ip-address-manager's users
// read keep the saturated int64.
func (c Count) Readable() string {
	if c.v.hi == 0 && c.v.lo <= readableExact {
		return c.String()
	}
	f, _ := new(big.Float).SetInt(c.Big()).Float64()
	e := math.Log2(f)
	if k := math.Round(e); math.Abs(e-k) < math.Log2(1+1e-3) {
		if c.Big().Cmp(new(big.Int).Lsh(big.NewInt(1), uint(k))) == 0 {
			return fmt.Sprintf("2^%d", int(k))
		}
		return fmt.Sprintf("~2^%d", int(k))
	}
	exp := int(math.Floor(math.Log10(f)))
	return fmt.Sprintf("%.1fe%d", f/math.Pow(10, float64(exp)), exp)
}
