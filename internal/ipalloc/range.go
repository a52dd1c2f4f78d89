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
	"net/netip"
	"strings"
)

// Range is an inclusive interval of addresses of one family.
type Range struct {
	First, Last netip.Addr
}

// ParseRange parses what users write to name addresses: a single address ("10.0.0.5"), an
// inclusive range of one family ("10.0.0.5-10.0.0.9") or a CIDR ("10.0.0.16/28", which
// means the whole block, network and broadcast included).
func ParseRange(s string) (Range, error) {
	r, err := parseRange(s)
	if err != nil {
		return Range{}, fmt.Errorf("%q: %w", s, err)
	}
	return r, nil
}

func parseRange(s string) (Range, error) {
	t := strings.TrimSpace(s)
	if strings.Contains(t, "/") {
		p, err := parseSubnet(t)
		if err != nil {
			return Range{}, err
		}
		return RangeOf(p), nil
	}
	first, last, isRange := strings.Cut(t, "-")
	if !isRange {
		a, err := parseAddr(t)
		return Range{a, a}, err
	}
	a, err := parseAddr(strings.TrimSpace(first))
	if err != nil {
		return Range{}, fmt.Errorf("first address %q: %w", first, err)
	}
	b, err := parseAddr(strings.TrimSpace(last))
	if err != nil {
		return Range{}, fmt.Errorf("last address %q: %w", last, err)
	}
	r := Range{a, b}
	return r, r.check()
}

// RangeOf returns every address of p, host bits of p ignored.
func RangeOf(p netip.Prefix) Range {
	p = p.Masked()
	return Range{p.Addr(), addrOf(lastOf(p), familyOf(p.Addr()))}
}

func (r Range) check() error {
	switch {
	case !r.First.IsValid() || !r.Last.IsValid():
		return fmt.Errorf("range needs a first and a last address")
	case r.First.Is4() != r.Last.Is4():
		return fmt.Errorf("range mixes %s first address %s and %s last address %s",
			familyOf(r.First), r.First, familyOf(r.Last), r.Last)
	case r.Last.Less(r.First):
		return fmt.Errorf("last address %s is lower than first address %s", r.Last, r.First)
	}
	return nil
}

// Contains reports whether a is in r.
func (r Range) Contains(a netip.Addr) bool {
	a = canonical(a)
	return a.Is4() == r.First.Is4() && r.First.Compare(a) <= 0 && a.Compare(r.Last) <= 0
}

// Size is the number of addresses in r. It is zero for an invalid range, and for
// "::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", whose 2^128 addresses do not fit.
func (r Range) Size() Count {
	if r.check() != nil {
		return Count{}
	}
	return Count{span(key(r.First), key(r.Last))}
}

// String returns "first-last", or a single address; ParseRange reads it back.
func (r Range) String() string {
	if r.First == r.Last {
		return r.First.String()
	}
	return r.First.String() + "-" + r.Last.String()
}
