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

package ipam

import (
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/util/validation/field"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// PoolRules are the checks the IPPool webhook adds to what the allocator needs: a pool it
// would serve, but that is almost certainly a mistake (a gateway no host of the range can
// reach, entries that overlap, two families in one pool). The allocator keeps serving a
// stored pool that breaks them, such as one ip-address-manager accepted; only a create or a
// change of the spec is refused.
func PoolRules(s *ipamv1alpha1.IPPoolSpec) field.ErrorList {
	var errs field.ErrorList
	pools := field.NewPath("spec", "pools")
	if len(s.Pools) == 0 {
		return field.ErrorList{field.Required(pools, "a pool needs at least one entry (start and end, or a subnet)")}
	}
	type span struct {
		lo, hi netip.Addr
		ok     bool
	}
	spans := make([]span, len(s.Pools))
	firstFamily := -1
	for i, e := range s.Pools {
		f := pools.Index(i)
		lo, hi, net, ok := entryBounds(s, i)
		if !ok {
			continue // the allocator's own checks report it
		}
		spans[i] = span{lo, hi, true}
		fam := 4
		if lo.Is6() {
			fam = 6
		}
		if firstFamily < 0 {
			firstFamily = fam
		} else if fam != firstFamily {
			errs = append(errs, field.Invalid(f, entryString(e), fmt.Sprintf("an IPv%d entry in a pool of IPv%d entries: use one pool per family", fam, firstFamily)))
		}
		errs = append(errs, dnsFamily(s, i, lo.Is4(), f)...)
		if !net.IsValid() {
			errs = append(errs, field.Required(f.Child("prefix"), "no prefix length: set it here, in spec.prefix, or give a subnet"))
			continue
		}
		if !net.Contains(hi) {
			errs = append(errs, field.Invalid(f, entryString(e), fmt.Sprintf("the range is wider than its network %s", net)))
		}
		gw, gwPath := gatewayOf(s, i), f.Child("gateway")
		if e.Gateway == nil {
			gwPath = field.NewPath("spec", "gateway")
		}
		if gw.IsValid() && gw.Unmap().Is4() == lo.Is4() && !net.Contains(gw.Unmap()) {
			errs = append(errs, field.Invalid(gwPath, gw.String(), fmt.Sprintf("outside the network %s of spec.pools[%d]", net, i)))
		}
	}
	for j := range spans {
		for i := range j {
			a, b := spans[i], spans[j]
			if a.ok && b.ok && a.lo.Is4() == b.lo.Is4() && a.lo.Compare(b.hi) <= 0 && b.lo.Compare(a.hi) <= 0 {
				errs = append(errs, field.Invalid(pools.Index(j), entryString(s.Pools[j]), fmt.Sprintf("overlaps spec.pools[%d]", i)))
			}
		}
	}
	return errs
}

// dnsFamily refuses a DNS server of entry i (its own, else the pool's) of the other family
// than the entry's addresses: a host given only an IPv4 address cannot reach an IPv6 server.
func dnsFamily(s *ipamv1alpha1.IPPoolSpec, i int, is4 bool, entry *field.Path) field.ErrorList {
	servers, path := s.Pools[i].DNSServers, entry.Child("dnsServers")
	if len(servers) == 0 {
		servers, path = s.DNSServers, field.NewPath("spec", "dnsServers")
	}
	fam := map[bool]int{true: 4, false: 6}
	var errs field.ErrorList
	for j, d := range servers {
		a, err := netip.ParseAddr(string(d))
		if err != nil || a.Unmap().Is4() == is4 {
			continue // a malformed address is the allocator's to report
		}
		errs = append(errs, field.Invalid(path.Index(j), string(d),
			fmt.Sprintf("an IPv%d DNS server for the IPv%d addresses of spec.pools[%d]", fam[!is4], fam[is4], i)))
	}
	return errs
}

// entryBounds is the first and last address of entry i and the network its addresses get
// (the prefix from the entry, else the pool, else the subnet); net is invalid when no
// prefix is known.
func entryBounds(s *ipamv1alpha1.IPPoolSpec, i int) (lo, hi netip.Addr, net netip.Prefix, ok bool) {
	e := s.Pools[i]
	var sub netip.Prefix
	if e.Subnet != nil {
		p, err := netip.ParsePrefix(string(*e.Subnet))
		if err != nil {
			return lo, hi, net, false
		}
		sub = p.Masked()
		lo, hi = sub.Addr(), lastOf(sub)
	}
	if e.Start != nil {
		a, err := netip.ParseAddr(string(*e.Start))
		if err != nil {
			return lo, hi, net, false
		}
		lo = a.Unmap()
	}
	if e.End != nil {
		a, err := netip.ParseAddr(string(*e.End))
		if err != nil {
			return lo, hi, net, false
		}
		hi = a.Unmap()
	}
	if !lo.IsValid() || !hi.IsValid() {
		return lo, hi, net, false
	}
	bits := int(e.Prefix)
	if bits == 0 {
		bits = int(s.Prefix)
	}
	switch {
	case bits > 0 && bits <= lo.BitLen():
		net, _ = lo.Prefix(bits)
	case sub.IsValid():
		net = sub
	}
	return lo, hi, net, true
}

func entryString(e ipamv1alpha1.Pool) string {
	str := func(p *ipamv1alpha1.IPAddressStr) string {
		if p == nil {
			return ""
		}
		return string(*p)
	}
	out := ""
	if e.Start != nil || e.End != nil {
		out = str(e.Start) + "-" + str(e.End)
	}
	if e.Subnet != nil {
		if out != "" {
			out += " in "
		}
		out += string(*e.Subnet)
	}
	return out
}
