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

// Package vlan is the VLAN id arithmetic of the switch port automation: the range syntax
// of the seeds ("1, 6-10"), sets of ids and the per-namespace usage count the webhooks
// and controllers share. It imports nothing from Kubernetes (a test enforces it).
package vlan

import (
	"iter"
	"math/bits"
	"strconv"
	"strings"
)

// The usable VLAN ids: 0 and 4095 are reserved by 802.1Q.
const (
	MinID = 1
	MaxID = 4094
)

// Valid reports whether id is a usable VLAN id.
func Valid(id int) bool { return id >= MinID && id <= MaxID }

// Set is a set of VLAN ids. It is a 512-byte bitmap: every operation is a few word
// operations with no allocation, and Sets are values that compare with ==. The zero
// value is the empty set.
type Set struct {
	w [64]uint64
}

// Range is an inclusive run of VLAN ids.
type Range struct {
	First, Last int
}

func (r Range) String() string {
	if r.First == r.Last {
		return strconv.Itoa(r.First)
	}
	return strconv.Itoa(r.First) + "-" + strconv.Itoa(r.Last)
}

// Of returns the set of ids; it panics on an invalid id, so use it for constants.
func Of(ids ...int) Set {
	var s Set
	for _, id := range ids {
		if !Valid(id) {
			panic("vlan: invalid VLAN id " + strconv.Itoa(id))
		}
		s.add(id)
	}
	return s
}

// RangeSet returns the ids first..last, or false if the range is empty or invalid.
func RangeSet(first, last int) (Set, bool) {
	var s Set
	if !Valid(first) || !Valid(last) || first > last {
		return s, false
	}
	s.addRange(first, last)
	return s, true
}

func (s *Set) add(id int) { s.w[id>>6] |= 1 << (id & 63) }

func (s *Set) addRange(first, last int) {
	for id := first; id <= last; {
		if id&63 == 0 && id+63 <= last {
			s.w[id>>6] = ^uint64(0)
			id += 64
			continue
		}
		s.add(id)
		id++
	}
}

// Add adds id and reports whether it is valid; an invalid id leaves s alone.
func (s *Set) Add(id int) bool {
	if !Valid(id) {
		return false
	}
	s.add(id)
	return true
}

// Remove removes id, if present.
func (s *Set) Remove(id int) {
	if Valid(id) {
		s.w[id>>6] &^= 1 << (id & 63)
	}
}

// Contains reports whether id is in s; invalid ids never are.
func (s Set) Contains(id int) bool {
	return Valid(id) && s.w[id>>6]&(1<<(id&63)) != 0
}

// Len returns the number of ids in s.
func (s Set) Len() int {
	n := 0
	for _, w := range s.w {
		n += bits.OnesCount64(w)
	}
	return n
}

// IsEmpty reports whether s has no id.
func (s Set) IsEmpty() bool { return s == Set{} }

// SubsetOf reports whether every id of s is in t.
func (s Set) SubsetOf(t Set) bool {
	for i := range s.w {
		if s.w[i]&^t.w[i] != 0 {
			return false
		}
	}
	return true
}

// Overlaps reports whether s and t share an id.
func (s Set) Overlaps(t Set) bool {
	for i := range s.w {
		if s.w[i]&t.w[i] != 0 {
			return true
		}
	}
	return false
}

// Union returns the ids in s or t.
func (s Set) Union(t Set) Set {
	for i := range s.w {
		s.w[i] |= t.w[i]
	}
	return s
}

// Intersect returns the ids in both s and t.
func (s Set) Intersect(t Set) Set {
	for i := range s.w {
		s.w[i] &= t.w[i]
	}
	return s
}

// Difference returns the ids in s and not in t.
func (s Set) Difference(t Set) Set {
	for i := range s.w {
		s.w[i] &^= t.w[i]
	}
	return s
}

// All yields the ids in increasing order.
func (s Set) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for i, w := range s.w {
			for w != 0 {
				b := bits.TrailingZeros64(w)
				if !yield(i<<6 | b) {
					return
				}
				w &= w - 1
			}
		}
	}
}

// Ranges returns s as maximal runs in increasing order.
func (s Set) Ranges() []Range {
	var out []Range
	for id := range s.All() {
		if n := len(out); n > 0 && out[n-1].Last == id-1 {
			out[n-1].Last = id
		} else {
			out = append(out, Range{id, id})
		}
	}
	return out
}

// String prints s in the seeds' syntax, "1, 6-10", which Parse reads back; the empty
// set prints as "".
func (s Set) String() string {
	var b strings.Builder
	for i, r := range s.Ranges() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// MarshalText implements encoding.TextMarshaler with String's syntax.
func (s Set) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with Parse.
func (s *Set) UnmarshalText(text []byte) error {
	t, err := Parse(string(text))
	if err != nil {
		return err
	}
	*s = t
	return nil
}
