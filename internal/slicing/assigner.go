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
	"net/netip"
	"slices"
)

// Hold is an IPPool that still holds addresses: Node's whereabouts pool of range Prefix.
type Hold struct {
	Prefix netip.Prefix
	Node   string
}

// Assignment is one slice and the node holding it ("" for a free slice in a listing).
type Assignment struct {
	Node  string
	Slice netip.Prefix
}

type span struct{ lo, hi uint64 }

// Assigner hands the slices of one network to nodes. A slice can be given to node n when it
// is inside range_start..range_end, touches no excluded prefix, is not given to another node,
// and every hold touching it is n's own IPPool of exactly that slice: so a node never gets
// addresses that another node's pods (or its own pods in an older, differently cut slice)
// still hold. Picking is the lowest eligible slice, amortised O(1) for joining nodes; nothing
// is enumerated.
type Assigner struct {
	grid     Grid
	lo, hi   uint64 // slices inside range_start..range_end
	none     bool   // no slice is inside them
	excluded []span // sorted, merged
	byNode   map[string]uint64
	byIndex  map[uint64]string
	exact    map[uint64]string // holds of exactly one slice: the holder, or "" when several nodes hold it
	wide     []span            // holds not matching one slice: nobody may get what they touch
	hint     uint64            // no eligible slice below it, for any node
}

// NewAssigner prepares the slices of n.
func NewAssigner(n Network) (*Assigner, error) {
	if err := n.Check(); err != nil {
		return nil, err
	}
	g, _ := NewGrid(n.Range, n.SliceBits)
	a := &Assigner{grid: g, hi: g.Count() - 1, byNode: map[string]uint64{}, byIndex: map[uint64]string{}, exact: map[uint64]string{}}
	first, last := g.Range().Addr(), lastAddr(g.Range())
	if n.Start.IsValid() {
		first = n.Start
	}
	if n.End.IsValid() {
		last = n.End
	}
	lo, hi, ok := g.inside(first, last)
	a.lo, a.hi, a.none = lo, hi, !ok
	var ex []span
	for _, x := range n.Exclude {
		if lo, hi, ok := g.PrefixSpan(x); ok {
			ex = append(ex, span{lo, hi})
		}
	}
	a.excluded = merge(ex)
	a.hint = a.lo
	return a, nil
}

// Grid is the network's grid.
func (a *Assigner) Grid() Grid { return a.grid }

func merge(s []span) []span {
	slices.SortFunc(s, func(x, y span) int {
		switch {
		case x.lo < y.lo:
			return -1
		case x.lo > y.lo:
			return 1
		}
		return 0
	})
	var out []span
	for _, x := range s {
		if n := len(out); n > 0 && x.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, x.hi)
			continue
		}
		out = append(out, x)
	}
	return out
}

// in finds the span of s holding i.
func in(s []span, i uint64) (span, bool) {
	k, _ := slices.BinarySearchFunc(s, i, func(x span, i uint64) int {
		switch {
		case x.hi < i:
			return -1
		case x.lo > i:
			return 1
		}
		return 0
	})
	if k < len(s) && s[k].lo <= i && i <= s[k].hi {
		return s[k], true
	}
	return span{}, false
}

// SetHolds replaces the holds (IPPools with addresses).
func (a *Assigner) SetHolds(holds []Hold) {
	a.exact = map[uint64]string{}
	var wide []span
	for _, h := range holds {
		lo, hi, ok := a.grid.PrefixSpan(h.Prefix)
		if !ok {
			continue
		}
		if i, exact := a.grid.Index(h.Prefix.Masked()); exact && h.Prefix.Bits() == a.grid.sliceBits {
			if holder, seen := a.exact[i]; seen && holder != h.Node {
				a.exact[i] = ""
			} else {
				a.exact[i] = h.Node
			}
			continue
		}
		wide = append(wide, span{lo, hi})
	}
	a.wide = merge(wide)
	a.hint = a.lo
}

// usable says whether slice i may ever be handed out (bounds and exclusions).
func (a *Assigner) usable(i uint64) bool {
	if a.none || i < a.lo || i > a.hi {
		return false
	}
	_, excluded := in(a.excluded, i)
	return !excluded
}

// eligible says whether slice i may be given to node now.
func (a *Assigner) eligible(i uint64, node string) bool {
	if !a.usable(i) {
		return false
	}
	if _, taken := a.byIndex[i]; taken {
		return false
	}
	if holder, held := a.exact[i]; held && holder != node {
		return false
	}
	_, wide := in(a.wide, i)
	return !wide
}

// Keep records that node holds slice p, as a stored pool says; it refuses a slice that is
// not one of this grid's usable slices, is another node's, or is held by another node's
// addresses (the node then gets a new slice with Assign).
func (a *Assigner) Keep(node string, p netip.Prefix) bool {
	i, ok := a.grid.Index(p)
	if !ok || !a.eligible(i, node) {
		return false
	}
	if old, had := a.byNode[node]; had {
		return old == i
	}
	a.byNode[node], a.byIndex[i] = i, node
	return true
}

// Lookup is node's slice.
func (a *Assigner) Lookup(node string) (netip.Prefix, bool) {
	i, ok := a.byNode[node]
	if !ok {
		return netip.Prefix{}, false
	}
	return a.grid.Slice(i), true
}

// Assign gives node its slice: the one it holds, else the lowest eligible one; false when
// none is left.
func (a *Assigner) Assign(node string) (netip.Prefix, bool) {
	if i, ok := a.byNode[node]; ok {
		return a.grid.Slice(i), true
	}
	if a.none {
		return netip.Prefix{}, false
	}
	advancing := true
	for i := a.hint; i <= a.hi; i++ {
		if x, ok := in(a.excluded, i); ok {
			i = x.hi
			continue
		}
		if x, ok := in(a.wide, i); ok {
			i = x.hi
			continue
		}
		if _, taken := a.byIndex[i]; taken {
			if advancing {
				a.hint = i + 1
			}
			continue
		}
		if holder, held := a.exact[i]; held && holder != node {
			advancing = false
			continue
		}
		a.byNode[node], a.byIndex[i] = i, node
		if advancing {
			a.hint = i + 1
		}
		return a.grid.Slice(i), true
	}
	return netip.Prefix{}, false
}

// Release frees node's slice; it goes to another node only once no hold touches it.
func (a *Assigner) Release(node string) {
	i, ok := a.byNode[node]
	if !ok {
		return
	}
	delete(a.byNode, node)
	delete(a.byIndex, i)
	a.hint = min(a.hint, i)
}

// Nodes is the number of nodes holding a slice.
func (a *Assigner) Nodes() int { return len(a.byNode) }

// Usable is the number of slices that may ever be handed out.
func (a *Assigner) Usable() uint64 {
	if a.none {
		return 0
	}
	n := a.hi - a.lo + 1
	for _, x := range a.excluded {
		lo, hi := max(x.lo, a.lo), min(x.hi, a.hi)
		if lo <= hi {
			n -= hi - lo + 1
		}
	}
	return n
}

// Held lists the usable slices no node holds that holds keep from being handed out, with the
// node whose addresses are in them ("" when several or a differently cut pool); at most
// limit of them, and how many there are in all.
func (a *Assigner) Held(limit int) ([]Assignment, uint64) {
	var out []Assignment
	var n uint64
	note := func(i uint64, node string) {
		if _, taken := a.byIndex[i]; taken || !a.usable(i) {
			return
		}
		n++
		if len(out) < limit {
			out = append(out, Assignment{Node: node, Slice: a.grid.Slice(i)})
		}
	}
	for i, node := range a.exact {
		if _, wide := in(a.wide, i); !wide {
			note(i, node)
		}
	}
	for _, w := range a.wide {
		for i := w.lo; i <= w.hi && i <= a.hi; i++ {
			note(i, "")
			if i == w.hi {
				break
			}
		}
	}
	slices.SortFunc(out, func(x, y Assignment) int { return x.Slice.Addr().Compare(y.Slice.Addr()) })
	return out, n
}

// Listing is what NodeSlicePool status.allocations says: every usable slice in address
// order, with its node or "", when there are at most max of them; else only the slices
// given to nodes, in address order.
func (a *Assigner) Listing(maxListed uint64) []Assignment {
	if u := a.Usable(); u > 0 && u <= maxListed {
		out := make([]Assignment, 0, u)
		for i := a.lo; i <= a.hi; i++ {
			if x, ok := in(a.excluded, i); ok {
				i = x.hi
				continue
			}
			out = append(out, Assignment{Node: a.byIndex[i], Slice: a.grid.Slice(i)})
			if i == a.hi {
				break
			}
		}
		return out
	}
	idx := make([]uint64, 0, len(a.byIndex))
	for i := range a.byIndex {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	out := make([]Assignment, len(idx))
	for k, i := range idx {
		out[k] = Assignment{Node: a.byIndex[i], Slice: a.grid.Slice(i)}
	}
	return out
}
