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
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// allocSpec is what ipalloc needs of an IPPool spec.
func allocSpec(s *ipamv1alpha1.IPPoolSpec) ipalloc.Spec {
	str := func(p *ipamv1alpha1.IPAddressStr) string {
		if p == nil {
			return ""
		}
		return string(*p)
	}
	strs := func(in []ipamv1alpha1.IPAddressStr) []string {
		out := make([]string, len(in))
		for i, v := range in {
			out[i] = string(v)
		}
		return out
	}
	out := ipalloc.Spec{
		Prefix:     int(s.Prefix),
		Gateway:    str(s.Gateway),
		DNSServers: strs(s.DNSServers),
	}
	for _, e := range s.Pools {
		entry := ipalloc.EntrySpec{
			Start:      str(e.Start),
			End:        str(e.End),
			Prefix:     int(e.Prefix),
			Gateway:    str(e.Gateway),
			DNSServers: strs(e.DNSServers),
		}
		if e.Subnet != nil {
			entry.Subnet = string(*e.Subnet)
		}
		out.Pools = append(out.Pools, entry)
	}
	for _, x := range s.ExcludedAddresses {
		out.ExcludedAddresses = append(out.ExcludedAddresses, string(x))
	}
	return out
}

// BuildPool builds the allocator of an IPPool spec with nothing in use. Its error, if any,
// is a field.ErrorList under spec, the form admission and status messages use.
func BuildPool(s *ipamv1alpha1.IPPoolSpec) (*ipalloc.Pool, field.ErrorList) {
	p, err := ipalloc.Build(allocSpec(s))
	if err != nil {
		return nil, FieldErrors(field.NewPath("spec"), err)
	}
	return p, nil
}

// FieldErrors turns ipalloc's errors, whose fields are relative to the spec
// ("pools[2].end"), into a field.ErrorList rooted at base.
func FieldErrors(base *field.Path, err error) field.ErrorList {
	var fes ipalloc.FieldErrors
	if !errors.As(err, &fes) {
		return field.ErrorList{field.InternalError(base, err)}
	}
	var out field.ErrorList
	for _, fe := range fes {
		out = append(out, field.Invalid(childPath(base, fe.Field), fe.Value, fe.Detail))
	}
	return out
}

// childPath walks a path written like "pools[2].dnsServers[0]" down from base.
func childPath(base *field.Path, rel string) *field.Path {
	p := base
	for _, part := range strings.Split(rel, ".") {
		name, rest, _ := strings.Cut(part, "[")
		p = p.Child(name)
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			if i, err := strconv.Atoi(idx); err == nil {
				p = p.Index(i)
			} else {
				p = p.Key(idx)
			}
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return p
}

// subnetEntry finds the entry whose subnet holds a, outside the entry's range: Metal3
// pre-allocates such addresses (the seed's example does). The subnet's network, broadcast
// and gateway addresses, and excluded addresses, never qualify. It returns -1 if none does.
func subnetEntry(s *ipamv1alpha1.IPPoolSpec, a netip.Addr) int {
	for _, x := range s.ExcludedAddresses {
		if excludes(string(x), a) {
			return -1
		}
	}
	for i, e := range s.Pools {
		if e.Subnet == nil {
			continue
		}
		p, err := netip.ParsePrefix(string(*e.Subnet))
		if err != nil || !p.Masked().Contains(a) || a == p.Masked().Addr() {
			continue
		}
		if a.Is4() && p.Bits() < 31 && a == lastOf(p.Masked()) {
			continue
		}
		if gw := gatewayOf(s, i); gw.IsValid() && gw.Unmap() == a {
			continue
		}
		return i
	}
	return -1
}

func lastOf(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func gatewayOf(s *ipamv1alpha1.IPPoolSpec, i int) netip.Addr {
	g := s.Gateway
	if s.Pools[i].Gateway != nil {
		g = s.Pools[i].Gateway
	}
	if g == nil {
		return netip.Addr{}
	}
	a, _ := netip.ParseAddr(string(*g))
	return a
}

// excludes reports whether an excludedAddresses item (an address, a range or a CIDR)
// holds a.
func excludes(x string, a netip.Addr) bool {
	if p, err := netip.ParsePrefix(x); err == nil {
		return p.Masked().Contains(a)
	}
	if lo, hi, ok := strings.Cut(x, "-"); ok {
		l, err1 := netip.ParseAddr(lo)
		h, err2 := netip.ParseAddr(hi)
		return err1 == nil && err2 == nil && l.Unmap().Compare(a) <= 0 && a.Compare(h.Unmap()) <= 0
	}
	b, err := netip.ParseAddr(x)
	return err == nil && b.Unmap() == a
}

// paramsFor says what goes with a: from the allocator for an address of a range, from the
// entry whose subnet holds it for a pre-allocation outside every range.
func paramsFor(s *ipamv1alpha1.IPPoolSpec, alloc *ipalloc.Pool, a netip.Addr) ipalloc.Params {
	if alloc != nil {
		if p, ok := alloc.Params(a); ok {
			return p
		}
	}
	i := subnetEntry(s, a)
	if i < 0 {
		return ipalloc.Params{}
	}
	e := s.Pools[i]
	p := ipalloc.Params{Entry: i, Prefix: int(e.Prefix), Gateway: gatewayOf(s, i)}
	if p.Prefix == 0 {
		p.Prefix = int(s.Prefix)
	}
	if p.Prefix == 0 {
		sub, _ := netip.ParsePrefix(string(*e.Subnet))
		p.Prefix = sub.Bits()
	}
	dns := s.DNSServers
	if len(e.DNSServers) > 0 {
		dns = e.DNSServers
	}
	for _, d := range dns {
		if da, err := netip.ParseAddr(string(d)); err == nil {
			p.DNSServers = append(p.DNSServers, da)
		}
	}
	return p
}

// PreAllocations parses spec.preAllocations and checks each address is one the pool may
// hand out; pool may be nil when the ranges themselves are invalid.
func PreAllocations(s *ipamv1alpha1.IPPoolSpec, pool *ipalloc.Pool) (map[string]netip.Addr, field.ErrorList) {
	var errs field.ErrorList
	out := make(map[string]netip.Addr, len(s.PreAllocations))
	owner := map[netip.Addr]string{}
	for _, claim := range sortedKeys(s.PreAllocations) {
		v := s.PreAllocations[claim]
		f := field.NewPath("spec", "preAllocations").Key(claim)
		a, err := netip.ParseAddr(string(v))
		if err != nil {
			errs = append(errs, field.Invalid(f, string(v), "not an IP address"))
			continue
		}
		a = a.Unmap()
		switch {
		case pool != nil && !pool.Contains(a) && subnetEntry(s, a) < 0:
			errs = append(errs, field.Invalid(f, string(v),
				"not an address of the pool: outside every range and every subnet, or a gateway, network, broadcast or excluded address"))
		case owner[a] != "":
			errs = append(errs, field.Duplicate(f, string(v)))
		default:
			owner[a] = claim
			out[claim] = a
		}
	}
	return out, errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
