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
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// MaxSliceBits bounds how many slices a range may be cut into (2^MaxSliceBits): a node needs
// one slice, so more is a mistake (a /48 cut into /128s), and indexes stay 64-bit.
const MaxSliceBits = 32

// ParseSliceSize reads node_slice_size as whereabouts does: a prefix length, with or
// without its leading slash ("/28", "28").
func ParseSliceSize(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "/"))
	if err != nil || n < 0 || n > 128 {
		return 0, fmt.Errorf("slice size %q is not a prefix length such as /28", s)
	}
	return n, nil
}

// Grid is a range cut into slices of one prefix length: slice i starts at the range's
// address plus i slice sizes, as whereabouts' DivideRangeBySize lists them.
type Grid struct {
	base      u128
	v4        bool
	rangeBits int
	sliceBits int
	hostBits  int // address bits a slice spans
}

// NewGrid cuts r (masked to its network address) into /sliceBits slices.
func NewGrid(r netip.Prefix, sliceBits int) (Grid, error) {
	if !r.IsValid() {
		return Grid{}, fmt.Errorf("invalid range")
	}
	r = r.Masked()
	addrBits := r.Addr().BitLen()
	switch {
	case sliceBits < r.Bits():
		return Grid{}, fmt.Errorf("slice size /%d is larger than the range %s", sliceBits, r)
	case sliceBits > addrBits:
		return Grid{}, fmt.Errorf("slice size /%d is longer than an IPv%d address", sliceBits, map[int]int{32: 4, 128: 6}[addrBits])
	case sliceBits-r.Bits() > MaxSliceBits:
		return Grid{}, fmt.Errorf("cutting %s into /%d slices makes 2^%d slices, more than 2^%d", r, sliceBits, sliceBits-r.Bits(), MaxSliceBits)
	}
	return Grid{base: fromAddr(r.Addr()), v4: r.Addr().Is4(), rangeBits: r.Bits(), sliceBits: sliceBits, hostBits: addrBits - sliceBits}, nil
}

// Count is the number of slices.
func (g Grid) Count() uint64 { return 1 << (g.sliceBits - g.rangeBits) }

// SliceBits is the slices' prefix length.
func (g Grid) SliceBits() int { return g.sliceBits }

// Range is the whole range.
func (g Grid) Range() netip.Prefix { return netip.PrefixFrom(g.base.addr(g.v4), g.rangeBits) }

// Slice is slice i (i < Count).
func (g Grid) Slice(i uint64) netip.Prefix {
	return netip.PrefixFrom(g.base.add(u128{lo: i}.shl(g.hostBits)).addr(g.v4), g.sliceBits)
}

// indexOf is the slice holding a (which must be inside the range).
func (g Grid) indexOf(a netip.Addr) uint64 { return fromAddr(a).sub(g.base).shr(g.hostBits).lo }

// Index is i when p is exactly slice i.
func (g Grid) Index(p netip.Prefix) (uint64, bool) {
	if !p.IsValid() || p.Bits() != g.sliceBits || p.Addr().Is4() != g.v4 || p.Masked() != p || !g.Range().Contains(p.Addr()) {
		return 0, false
	}
	return g.indexOf(p.Addr()), true
}

// Span is the slices that the addresses first..last (inclusive) touch; ok is false when
// they lie outside the range or are of the other family.
func (g Grid) Span(first, last netip.Addr) (lo, hi uint64, ok bool) {
	r := g.Range()
	if first.Is4() != g.v4 || last.Is4() != g.v4 || last.Less(first) {
		return 0, 0, false
	}
	if !r.Contains(first) {
		if first.Less(r.Addr()) {
			first = r.Addr()
		} else {
			return 0, 0, false
		}
	}
	end := lastAddr(r)
	if !r.Contains(last) {
		if end.Less(last) {
			last = end
		} else {
			return 0, 0, false
		}
	}
	return g.indexOf(first), g.indexOf(last), true
}

// PrefixSpan is the slices p touches.
func (g Grid) PrefixSpan(p netip.Prefix) (lo, hi uint64, ok bool) {
	p = p.Masked()
	return g.Span(p.Addr(), lastAddr(p))
}

// inside is the slices lying wholly within first..last.
func (g Grid) inside(first, last netip.Addr) (lo, hi uint64, ok bool) {
	lo, hi, ok = g.Span(first, last)
	if !ok {
		return 0, 0, false
	}
	if g.Slice(lo).Addr().Less(first) {
		lo++
	}
	if last.Less(lastAddr(g.Slice(hi))) {
		if hi == 0 {
			return 0, 0, false
		}
		hi--
	}
	return lo, hi, lo <= hi
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	p = p.Masked()
	host := p.Addr().BitLen() - p.Bits()
	ones := u128{hi: ^uint64(0), lo: ^uint64(0)}
	if host < 128 {
		ones = u128{lo: 1}.shl(host).sub(u128{lo: 1})
	}
	return fromAddr(p.Addr()).add(ones).addr(p.Addr().Is4())
}
