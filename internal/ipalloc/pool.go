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
	"iter"
	"math/rand/v2"
	"net/netip"
	"slices"
)

// Strategy chooses among the free addresses.
type Strategy int

const (
	// Sequential hands out the lowest free address (IPv4 before IPv6).
	Sequential Strategy = iota
	// Random hands out an address drawn uniformly from all free addresses of the pool,
	// so every free address is equally likely whatever the holes look like.
	Random
	// InOrder hands out the lowest free address of the first entry, in the order the
	// entries were given, that has one: ip-address-manager's "sequential", which consumes
	// the entries of a pool in declaration order whatever their addresses.
	InOrder
	// RandomFirstFree hands out an address drawn uniformly from the free addresses of the
	// first entry, in the order the entries were given, that has one: ip-address-manager's
	// "random", which draws inside one entry and moves to the next only once it is full.
	RandomFirstFree
)

func (s Strategy) String() string {
	switch s {
	case Sequential:
		return "sequential"
	case Random:
		return "random"
	case InOrder:
		return "in-order"
	case RandomFirstFree:
		return "random-first-free"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// Params is what comes with an address: the values of the entry that holds it, or the
// pool defaults where the entry sets none.
type Params struct {
	// Entry is the index in Config.Entries (spec.pools) of the entry holding the address;
	// where entries overlap it is the first of them.
	Entry int
	// Prefix is the entry's prefix, else the pool's, else the bit length of the entry's
	// subnet, else 0.
	Prefix int
	// Gateway is the entry's gateway, else the pool's if of the same family; it is the
	// zero Addr when there is none.
	Gateway    netip.Addr
	DNSServers []netip.Addr
}

// Pool hands out the addresses of a Config. Addresses given to its methods may be
// IPv4-mapped IPv6 (what netip.AddrFromSlice makes of a net.IP) and are read as IPv4.
//
// A Pool is not safe for concurrent use: the caller serialises, which the controllers do
// anyway since a pool is reconciled by one worker at a time.
type Pool struct {
	fams   [2]space
	order  []ordered // every entry's runs, by entry then address: the walk of InOrder
	params []Params
	rng    *rand.Rand
}

// ordered is a run of addresses of one entry.
type ordered struct {
	fam    family
	lo, hi uint128
	entry  int
}

// space is the part of a pool of one family.
type space struct {
	fam     family
	entries []seg // what each entry covers, exclusions included, for Params
	members []seg // the addresses the pool may hand out
	total   uint128
	free    freeTree
}

// Option configures a Pool.
type Option func(*Pool)

// WithRand makes Random draw from r, so that tests and simulations are reproducible.
func WithRand(r *rand.Rand) Option { return func(p *Pool) { p.rng = r } }

// NewPool validates c (see Config.Validate) and returns a pool with every address free.
// It refuses, at field "pools", a pool of 2^128 addresses or more, so that counts fit
// in 128 bits.
func NewPool(c Config, opts ...Option) (*Pool, error) {
	bs, errs := c.resolve()
	if len(errs) > 0 {
		return nil, errs
	}
	p := &Pool{params: make([]Params, len(c.Entries))}
	var excluded [2][]seg
	exclude := func(a netip.Addr) {
		if a.IsValid() {
			a = canonical(a)
			excluded[familyOf(a)] = append(excluded[familyOf(a)], seg{lo: key(a), hi: key(a)})
		}
	}
	exclude(c.Gateway)
	for _, r := range c.Excluded {
		f := familyOf(canonical(r.First))
		excluded[f] = append(excluded[f], seg{lo: key(canonical(r.First)), hi: key(canonical(r.Last))})
	}
	for i, e := range c.Entries {
		b := bs[i]
		p.fams[b.fam].entries = cover(p.fams[b.fam].entries, b.lo, b.hi, i)
		p.params[i] = c.paramsOf(e, b)
		p.params[i].Entry = i
		exclude(e.Gateway)
		if b.subnet.IsValid() && hasReserved(b.subnet) && !c.AllocateReserved {
			exclude(b.subnet.Addr())
			if b.fam == ipv4 {
				exclude(addrOf(lastOf(b.subnet), ipv4))
			}
		}
	}
	var total uint128
	for f := range p.fams {
		s := &p.fams[f]
		s.fam = family(f)
		s.members = subtract(s.entries, normalize(excluded[f]))
		s.free = newFreeTree()
		for _, run := range normalize(slices.Clone(s.members)) {
			size := span(run.lo, run.hi)
			var ok bool
			if s.total, ok = s.total.addOK(size); !ok || size.isZero() {
				return nil, FieldErrors{{Field: "pools", Detail: "the pool holds 2^128 addresses or more"}}
			}
			s.free.insert(run.lo, run.hi)
		}
		var ok bool
		if total, ok = total.addOK(s.total); !ok {
			return nil, FieldErrors{{Field: "pools", Detail: "the pool holds 2^128 addresses or more"}}
		}
	}
	for f := range p.fams {
		for _, sg := range p.fams[f].entries {
			p.order = append(p.order, ordered{family(f), sg.lo, sg.hi, sg.entry})
		}
	}
	slices.SortFunc(p.order, func(a, b ordered) int {
		if a.entry != b.entry {
			return a.entry - b.entry
		}
		return a.lo.cmp(b.lo)
	})
	for _, o := range opts {
		o(p)
	}
	if p.rng == nil {
		p.rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return p, nil
}

func (c Config) paramsOf(e Entry, b bounds) Params {
	p := Params{Prefix: e.Prefix, Gateway: canonical(e.Gateway), DNSServers: e.DNSServers}
	if p.Prefix == 0 {
		p.Prefix = c.Prefix
	}
	if p.Prefix == 0 && b.subnet.IsValid() {
		p.Prefix = b.subnet.Bits()
	}
	if g := canonical(c.Gateway); !p.Gateway.IsValid() && g.IsValid() && familyOf(g) == b.fam {
		p.Gateway = g
	}
	if len(p.DNSServers) == 0 {
		p.DNSServers = c.DNSServers
	}
	p.DNSServers = slices.Clone(p.DNSServers)
	return p
}

func (p *Pool) space(a netip.Addr) (*space, uint128, bool) {
	a = canonical(a)
	if !a.IsValid() {
		return nil, uint128{}, false
	}
	return &p.fams[familyOf(a)], key(a), true
}

// Contains reports whether the pool may hand out a, used or not.
func (p *Pool) Contains(a netip.Addr) bool {
	s, k, ok := p.space(a)
	return ok && find(s.members, k) >= 0
}

// InUse reports whether a is in the pool and used.
func (p *Pool) InUse(a netip.Addr) bool {
	s, k, ok := p.space(a)
	return ok && find(s.members, k) >= 0 && !s.free.contains(k)
}

// Reserve marks a used. It fails with ErrNotInPool or ErrInUse.
func (p *Pool) Reserve(a netip.Addr) error {
	s, k, ok := p.space(a)
	switch {
	case ok && s.free.take(k):
		return nil
	case ok && find(s.members, k) >= 0:
		return fmt.Errorf("%w: %s", ErrInUse, canonical(a))
	}
	return fmt.Errorf("%w: %s", ErrNotInPool, a)
}

// Release marks a free again. It fails with ErrNotInPool or ErrNotInUse.
func (p *Pool) Release(a netip.Addr) error {
	s, k, ok := p.space(a)
	switch {
	case !ok || find(s.members, k) < 0:
		return fmt.Errorf("%w: %s", ErrNotInPool, a)
	case s.free.contains(k):
		return fmt.Errorf("%w: %s", ErrNotInUse, canonical(a))
	}
	s.free.put(k)
	return nil
}

// Allocate marks a free address used and returns it, or fails with ErrExhausted.
func (p *Pool) Allocate(strategy Strategy) (netip.Addr, error) {
	v4, v6 := &p.fams[ipv4], &p.fams[ipv6]
	f4, f6 := v4.free.total(), v6.free.total()
	if f4.isZero() && f6.isZero() {
		return netip.Addr{}, ErrExhausted
	}
	var s *space
	var k uint128
	switch strategy {
	case Sequential:
		s = v4
		if f4.isZero() {
			s = v6
		}
		k = s.free.takeFirst()
	case InOrder:
		for _, o := range p.order {
			s = &p.fams[o.fam]
			if first, ok := s.free.firstFrom(o.lo); ok && !o.hi.less(first) {
				s.free.take(first)
				return addrOf(first, s.fam), nil
			}
		}
		return netip.Addr{}, ErrExhausted
	case RandomFirstFree:
		return p.randomFirstFree()
	case Random:
		i := uniform(p.rng, f4.add(f6))
		if s = v4; !i.less(f4) {
			s, i = v6, i.sub(f4)
		}
		k = s.free.takeNth(i)
	default:
		return netip.Addr{}, fmt.Errorf("ipalloc: unknown strategy %d", int(strategy))
	}
	return addrOf(k, s.fam), nil
}

// randomFirstFree draws uniformly among the free addresses of the first entry that has one.
func (p *Pool) randomFirstFree() (netip.Addr, error) {
	for i := 0; i < len(p.order); {
		j := i
		var free uint128
		for ; j < len(p.order) && p.order[j].entry == p.order[i].entry; j++ {
			free = free.add(p.fams[p.order[j].fam].free.freeIn(p.order[j].lo, p.order[j].hi))
		}
		if free.isZero() {
			i = j
			continue
		}
		n := uniform(p.rng, free)
		for ; i < j; i++ {
			o := p.order[i]
			t := &p.fams[o.fam].free
			in := t.freeIn(o.lo, o.hi)
			if n.less(in) {
				return addrOf(t.takeNth(t.freeBelow(o.lo).add(n)), o.fam), nil
			}
			n = n.sub(in)
		}
	}
	return netip.Addr{}, ErrExhausted
}

// uniform returns a uniform integer in [0, n), n > 0. Above 64 bits it draws the top
// word uniformly and rejects the draws that land past n, less than half of them.
func uniform(r *rand.Rand, n uint128) uint128 {
	if n.hi == 0 {
		return u64(r.Uint64N(n.lo))
	}
	for {
		var v uint128
		if n.hi == ^uint64(0) {
			v.hi = r.Uint64()
		} else {
			v.hi = r.Uint64N(n.hi + 1)
		}
		v.lo = r.Uint64()
		if v.less(n) {
			return v
		}
	}
}

// Counts returns the exact number of addresses of the pool, used and free.
func (p *Pool) Counts() Counts {
	total := p.fams[ipv4].total.add(p.fams[ipv6].total)
	free := p.fams[ipv4].free.total().add(p.fams[ipv6].free.total())
	return Counts{Total: Count{total}, Used: Count{total.sub(free)}, Free: Count{free}}
}

// Params returns what comes with a: the prefix, gateway and DNS servers of the entry
// whose range holds it. It answers for every address of an entry's range, excluded ones
// such as the gateway included, and reports false outside every entry.
func (p *Pool) Params(a netip.Addr) (Params, bool) {
	s, k, ok := p.space(a)
	if !ok {
		return Params{}, false
	}
	i := find(s.entries, k)
	if i < 0 {
		return Params{}, false
	}
	pa := p.params[s.entries[i].entry]
	pa.DNSServers = slices.Clone(pa.DNSServers)
	return pa, true
}

// Ranges yields the addresses the pool may hand out, as maximal ranges in address order
// (IPv4 first).
func (p *Pool) Ranges() iter.Seq[Range] {
	return func(yield func(Range) bool) {
		for f := range p.fams {
			for _, run := range normalize(slices.Clone(p.fams[f].members)) {
				if !yield(Range{addrOf(run.lo, family(f)), addrOf(run.hi, family(f))}) {
					return
				}
			}
		}
	}
}

// FreeRanges yields the free addresses as maximal ranges in address order (IPv4 first).
// The pool must not change while the sequence runs.
func (p *Pool) FreeRanges() iter.Seq[Range] {
	return func(yield func(Range) bool) {
		for f := range p.fams {
			ok := p.fams[f].free.each(func(lo, hi uint128) bool {
				return yield(Range{addrOf(lo, family(f)), addrOf(hi, family(f))})
			})
			if !ok {
				return
			}
		}
	}
}
