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
	"errors"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
)

// model is the naive reference: a map of every address of the pool, computed from the
// Config by walking addresses one by one.
type model struct {
	entry map[netip.Addr]int  // address -> first entry whose range holds it
	free  map[netip.Addr]bool // allocatable address -> free
}

func newModel(c Config) *model {
	m := &model{entry: map[netip.Addr]int{}, free: map[netip.Addr]bool{}}
	excluded := map[netip.Addr]bool{}
	if c.Gateway.IsValid() {
		excluded[c.Gateway] = true
	}
	for _, r := range c.Excluded {
		for a := r.First; a.IsValid() && a.Compare(r.Last) <= 0; a = a.Next() {
			excluded[a] = true
		}
	}
	for i, e := range c.Entries {
		first, last := e.Start, e.End
		if e.Subnet.IsValid() {
			net := e.Subnet.Masked()
			lo, hi := net.Addr(), net.Addr()
			for hi.Next().IsValid() && net.Contains(hi.Next()) {
				hi = hi.Next()
			}
			bigEnough := net.Bits() < net.Addr().BitLen()-1
			if bigEnough && !c.AllocateReserved {
				excluded[lo] = true
				if lo.Is4() {
					excluded[hi] = true
				}
			}
			if !first.IsValid() {
				first = lo
				if bigEnough && !c.AllocateReserved {
					first = lo.Next()
				}
			}
			if !last.IsValid() {
				last = hi
				if bigEnough && !c.AllocateReserved && hi.Is4() {
					last = hi.Prev()
				}
			}
		}
		if e.Gateway.IsValid() {
			excluded[e.Gateway] = true
		}
		for a := first; a.IsValid() && a.Compare(last) <= 0; a = a.Next() {
			if _, ok := m.entry[a]; !ok {
				m.entry[a] = i
			}
		}
	}
	for a := range m.entry {
		if !excluded[a] {
			m.free[a] = true
		}
	}
	return m
}

func (m *model) freeSorted() []netip.Addr {
	var out []netip.Addr
	for a, f := range m.free {
		if f {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

func (m *model) counts() (total, used int) {
	for _, f := range m.free {
		total++
		if !f {
			used++
		}
	}
	return total, used
}

// randomConfig makes a small pool of one or both families whose addresses all lie in
// 10.0.0.0/26 and fd00::/122, so that random probes hit members, holes and outsiders.
func randomConfig(r *rand.Rand) Config {
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}) }
	v6 := func(i int) netip.Addr { return netip.AddrFrom16([16]byte{0: 0xfd, 15: byte(i)}) }
	var c Config
	for range 1 + r.IntN(3) {
		at := v4
		if r.IntN(3) == 0 {
			at = v6
		}
		var e Entry
		switch r.IntN(4) {
		case 0: // start-end
			a, b := r.IntN(64), r.IntN(64)
			e.Start, e.End = at(min(a, b)), at(max(a, b))
		case 1: // subnet only
			bits := at(0).BitLen() - 1 - r.IntN(5)
			e.Subnet = netip.PrefixFrom(at(r.IntN(64)), bits).Masked()
		default: // start/end bounded by a subnet
			bits := at(0).BitLen() - 2 - r.IntN(4)
			e.Subnet = netip.PrefixFrom(at(r.IntN(64)), bits).Masked()
			size := 1 << (at(0).BitLen() - bits)
			base := int(e.Subnet.Addr().As16()[15])
			if r.IntN(2) == 0 {
				e.Start = at(base + 1 + r.IntN(size-2))
			} else {
				e.End = at(base + 1 + r.IntN(size-2))
			}
		}
		if r.IntN(3) == 0 {
			e.Gateway = at(r.IntN(64))
		}
		c.Entries = append(c.Entries, e)
	}
	if r.IntN(3) == 0 {
		c.Gateway = v4(r.IntN(64))
		if c.Entries[0].Start.Is6() || c.Entries[0].Subnet.Addr().Is6() {
			c.Gateway = v6(r.IntN(64))
		}
	}
	for range r.IntN(3) {
		at := v4
		if r.IntN(3) == 0 {
			at = v6
		}
		a, b := r.IntN(64), r.IntN(64)
		c.Excluded = append(c.Excluded, Range{at(min(a, b)), at(min(a, b) + r.IntN(4))})
		_ = b
	}
	c.AllocateReserved = r.IntN(4) == 0
	return c
}

// probe returns an address near the test pools: a member, a hole, or an outsider.
func probe(r *rand.Rand) netip.Addr {
	i := byte(r.IntN(70))
	if r.IntN(3) == 0 {
		return netip.AddrFrom16([16]byte{0: 0xfd, 15: i})
	}
	return netip.AddrFrom4([4]byte{10, 0, 0, i})
}

// check runs one operation on both the pool and the model and reports a mismatch.
func check(t testing.TB, p *Pool, m *model, op int, a netip.Addr) {
	t.Helper()
	switch op % 7 {
	case 0:
		err := p.Reserve(a)
		free, in := m.free[a]
		switch {
		case !in && !errors.Is(err, ErrNotInPool):
			t.Fatalf("Reserve(%s) = %v, want ErrNotInPool", a, err)
		case in && !free && !errors.Is(err, ErrInUse):
			t.Fatalf("Reserve(%s) = %v, want ErrInUse", a, err)
		case in && free && err != nil:
			t.Fatalf("Reserve(%s) = %v, want nil", a, err)
		}
		if in {
			m.free[a] = false
		}
	case 1:
		err := p.Release(a)
		free, in := m.free[a]
		switch {
		case !in && !errors.Is(err, ErrNotInPool):
			t.Fatalf("Release(%s) = %v, want ErrNotInPool", a, err)
		case in && free && !errors.Is(err, ErrNotInUse):
			t.Fatalf("Release(%s) = %v, want ErrNotInUse", a, err)
		case in && !free && err != nil:
			t.Fatalf("Release(%s) = %v, want nil", a, err)
		}
		if in {
			m.free[a] = true
		}
	case 2, 3:
		s := Strategy(op % 2)
		got, err := p.Allocate(s)
		want := m.freeSorted()
		switch {
		case len(want) == 0:
			if !errors.Is(err, ErrExhausted) {
				t.Fatalf("Allocate(%v) = %s, %v on a full pool, want ErrExhausted", s, got, err)
			}
			return
		case err != nil:
			t.Fatalf("Allocate(%v) = %v with %d free", s, err, len(want))
		case s == Sequential && got != want[0]:
			t.Fatalf("Allocate(Sequential) = %s, want %s", got, want[0])
		case !m.free[got]:
			t.Fatalf("Allocate(%v) = %s, which is not free", s, got)
		}
		m.free[got] = false
	case 4:
		free, in := m.free[a]
		if p.Contains(a) != in || p.InUse(a) != (in && !free) {
			t.Fatalf("Contains(%s), InUse = %v, %v; want %v, %v", a, p.Contains(a), p.InUse(a), in, in && !free)
		}
		e, in := m.entry[a]
		pa, ok := p.Params(a)
		if ok != in || (in && pa.Entry != e) {
			t.Fatalf("Params(%s) = entry %d, %v; want %d, %v", a, pa.Entry, ok, e, in)
		}
	case 5:
		total, used := m.counts()
		c := p.Counts()
		if c.Total.Uint64() != uint64(total) || c.Used.Uint64() != uint64(used) || c.Free.Uint64() != uint64(total-used) {
			t.Fatalf("Counts() = %v, want total %d used %d", c, total, used)
		}
		var got []netip.Addr
		for r := range p.FreeRanges() {
			for a := r.First; a.Compare(r.Last) <= 0; a = a.Next() {
				got = append(got, a)
			}
		}
		if want := m.freeSorted(); !slices.Equal(got, want) {
			t.Fatalf("FreeRanges() = %v, want %v", got, want)
		}
		for f := range p.fams {
			verifyTree(t, &p.fams[f].free)
		}
	case 6:
		// InOrder: the lowest free address of the first entry that has one.
		got, err := p.Allocate(InOrder)
		want := m.freeSorted()
		slices.SortStableFunc(want, func(x, y netip.Addr) int { return m.entry[x] - m.entry[y] })
		switch {
		case len(want) == 0:
			if !errors.Is(err, ErrExhausted) {
				t.Fatalf("Allocate(InOrder) = %s, %v on a full pool, want ErrExhausted", got, err)
			}
			return
		case err != nil || got != want[0]:
			t.Fatalf("Allocate(InOrder) = %s, %v; want %s", got, err, want[0])
		}
		m.free[got] = false
	case 7:
		// RandomFirstFree: a free address of the first entry that has one.
		got, err := p.Allocate(RandomFirstFree)
		want := m.freeSorted()
		if len(want) == 0 {
			if !errors.Is(err, ErrExhausted) {
				t.Fatalf("Allocate(RandomFirstFree) = %s, %v on a full pool, want ErrExhausted", got, err)
			}
			return
		}
		first := slices.MinFunc(want, func(x, y netip.Addr) int { return m.entry[x] - m.entry[y] })
		if err != nil || !m.free[got] || m.entry[got] != m.entry[first] {
			t.Fatalf("Allocate(RandomFirstFree) = %s, %v; want a free address of entry %d", got, err, m.entry[first])
		}
		m.free[got] = false
	}
}

// TestAgainstModel replays random operation sequences on random pools against the naive
// model and demands the same answers.
func TestAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	valid := 0
	for run := range 400 {
		c := randomConfig(r)
		p, err := NewPool(c, WithRand(rand.New(rand.NewPCG(uint64(run), 0))))
		if err != nil {
			continue // random configs are sometimes invalid; the table tests cover that
		}
		valid++
		m := newModel(c)
		for range 400 {
			check(t, p, m, r.IntN(8), probe(r))
		}
	}
	if valid < 200 {
		t.Fatalf("only %d of 400 random configs were valid", valid)
	}
	t.Logf("%d valid pools", valid)
}

// verifyTree checks the treap invariants: order, disjoint and non-adjacent intervals,
// heap-ordered priorities and exact subtree sums.
func verifyTree(t testing.TB, tr *freeTree) {
	t.Helper()
	var prev *node
	var walk func(x int32) uint128
	walk = func(x int32) uint128 {
		if x == 0 {
			return uint128{}
		}
		n := tr.n(x)
		for _, c := range []int32{n.left, n.right} {
			if c != 0 && tr.n(c).prio > n.prio {
				t.Fatalf("heap order broken at [%v, %v]", n.lo, n.hi)
			}
		}
		sum := walk(n.left)
		if n.hi.less(n.lo) || (prev != nil && !prev.hi.inc().less(n.lo)) {
			t.Fatalf("interval [%v, %v] out of order, empty, or touching its predecessor", n.lo, n.hi)
		}
		prev = n
		sum = sum.add(span(n.lo, n.hi)).add(walk(n.right))
		if sum != n.sum {
			t.Fatalf("sum at [%v, %v] = %v, want %v", n.lo, n.hi, n.sum, sum)
		}
		return sum
	}
	walk(tr.root)
}
