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
	"strconv"
)

// Entry is one range of a pool (Metal3 spec.pools[i]). Zero values mean "not set".
//
// The range is Start..End; with a Subnet, a missing Start is the first usable address
// (network+1) and a missing End the last usable one (broadcast-1 for IPv4, the last
// address for IPv6), and Start and End must lie inside the Subnet.
type Entry struct {
	Start, End netip.Addr
	Subnet     netip.Prefix
	// Prefix, Gateway and DNSServers override the pool defaults for addresses of this
	// entry. Prefix 0 means unset, as in Metal3.
	Prefix     int
	Gateway    netip.Addr
	DNSServers []netip.Addr
}

// Config is a typed pool definition. ParseSpec builds one from what users write.
//
// The pool hands out the union of the entries' ranges minus, everywhere in the pool:
// every gateway (of the entries and the pool default), the network address and the IPv4
// broadcast address of every entry with a Subnet (unless AllocateReserved, and never for
// /31, /32, /127 and /128 subnets, which have none), and the Excluded ranges.
type Config struct {
	Entries []Entry
	// Defaults for entries that do not set their own. Gateway applies to entries of its
	// family only.
	Prefix     int
	Gateway    netip.Addr
	DNSServers []netip.Addr
	// Excluded addresses are never handed out.
	Excluded []Range
	// AllocateReserved lets the network and IPv4 broadcast address of subnet entries be
	// handed out (Cluster API's allocateReservedIPAddresses). Gateways stay excluded.
	AllocateReserved bool
}

// bounds is the resolved interval of an entry; ok is false when the entry is invalid.
type bounds struct {
	lo, hi uint128
	fam    family
	subnet netip.Prefix // masked, unmapped; zero when the entry has none
	ok     bool
}

// Validate checks c and returns FieldErrors naming every offending field, or nil.
func (c Config) Validate() error {
	_, errs := c.resolve()
	return errs.orNil()
}

// resolve validates c and computes each entry's interval.
func (c Config) resolve() ([]bounds, FieldErrors) {
	var errs FieldErrors
	add := func(field, value, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Value: value, Detail: fmt.Sprintf(format, args...)})
	}
	out := make([]bounds, len(c.Entries))
	has := [2]bool{}
	for i, e := range c.Entries {
		f := "pools[" + strconv.Itoa(i) + "]"
		b, ok := c.resolveEntry(e, f, add)
		if ok {
			b.ok = true
			out[i] = b
			has[b.fam] = true
		}
	}
	if c.Prefix < 0 || c.Prefix > 128 {
		add("prefix", strconv.Itoa(c.Prefix), "must be between 0 and 128")
	} else if c.Prefix > 32 {
		for i, e := range c.Entries {
			if out[i].ok && out[i].fam == ipv4 && e.Prefix == 0 {
				add("prefix", strconv.Itoa(c.Prefix), "longer than 32 bits, but pools[%d] is IPv4 and sets no prefix of its own", i)
				break
			}
		}
	}
	if c.Gateway.IsValid() {
		g := canonical(c.Gateway)
		if len(c.Entries) > 0 && !has[familyOf(g)] {
			add("gateway", g.String(), "%s gateway, but no entry of pools is %s", familyOf(g), familyOf(g))
		}
	}
	for j, d := range c.DNSServers {
		if !d.IsValid() {
			add("dnsServers["+strconv.Itoa(j)+"]", "", "is not an IP address")
		}
	}
	for j, r := range c.Excluded {
		r = Range{canonical(r.First), canonical(r.Last)}
		if err := r.check(); err != nil {
			add("excludedAddresses["+strconv.Itoa(j)+"]", r.String(), "%v", err)
		}
	}
	return out, errs
}

func (c Config) resolveEntry(e Entry, f string, add func(field, value, format string, args ...any)) (bounds, bool) {
	start, end := canonical(e.Start), canonical(e.End)
	subnet := e.Subnet
	if subnet.IsValid() {
		if subnet.Addr().Is4In6() && subnet.Bits() >= 96 {
			subnet = netip.PrefixFrom(subnet.Addr().Unmap(), subnet.Bits()-96)
		}
		subnet = subnet.Masked()
	}
	var fam family
	switch {
	case subnet.IsValid():
		fam = familyOf(subnet.Addr())
	case start.IsValid():
		fam = familyOf(start)
	case end.IsValid():
		fam = familyOf(end)
	default:
		add(f, "", "set start and end, or subnet")
		return bounds{}, false
	}
	ok := true
	sameFamily := func(field string, a netip.Addr, ref string) {
		if a.IsValid() && familyOf(a) != fam {
			add(f+"."+field, a.String(), "%s address, but %s is %s", familyOf(a), ref, fam)
			ok = false
		}
	}
	switch {
	case subnet.IsValid():
		sameFamily("start", start, "subnet "+subnet.String())
		sameFamily("end", end, "subnet "+subnet.String())
	case start.IsValid():
		sameFamily("end", end, "start "+start.String())
	}
	sameFamily("gateway", canonical(e.Gateway), "the entry")
	if e.Prefix < 0 || e.Prefix > fam.bits() {
		add(f+".prefix", strconv.Itoa(e.Prefix), "must be between 0 and %d for an %s entry", fam.bits(), fam)
		ok = false
	}
	for j, d := range e.DNSServers {
		if !d.IsValid() {
			add(f+".dnsServers["+strconv.Itoa(j)+"]", "", "is not an IP address")
			ok = false
		}
	}
	if !ok {
		return bounds{}, false
	}

	var lo, hi uint128
	if subnet.IsValid() {
		net := RangeOf(subnet)
		for _, p := range []struct {
			field string
			a     netip.Addr
		}{{"start", start}, {"end", end}} {
			if p.a.IsValid() && !net.Contains(p.a) {
				add(f+"."+p.field, p.a.String(), "outside subnet %s", subnet)
				ok = false
			}
		}
		if !ok {
			return bounds{}, false
		}
		lo, hi = usable(subnet, c.AllocateReserved)
		if start.IsValid() {
			lo = key(start)
		}
		if end.IsValid() {
			hi = key(end)
		}
	} else {
		if !start.IsValid() {
			add(f+".start", "", "required unless subnet is set")
			return bounds{}, false
		}
		if !end.IsValid() {
			add(f+".end", "", "required unless subnet is set")
			return bounds{}, false
		}
		lo, hi = key(start), key(end)
	}
	if hi.less(lo) {
		switch {
		case start.IsValid() && end.IsValid():
			add(f+".end", end.String(), "lower than start %s", start)
		case start.IsValid():
			add(f+".start", start.String(), "after the last usable address %s of subnet %s", addrOf(hi, fam), subnet)
		default:
			add(f+".end", end.String(), "before the first usable address %s of subnet %s", addrOf(lo, fam), subnet)
		}
		return bounds{}, false
	}
	return bounds{lo: lo, hi: hi, fam: fam, subnet: subnet}, true
}
