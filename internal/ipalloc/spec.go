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
	"net/netip"
	"strconv"
)

// EntrySpec is one entry of a pool as users write it (Metal3 spec.pools[i]); empty
// strings are unset fields.
type EntrySpec struct {
	Start, End string
	Subnet     string
	Prefix     int
	Gateway    string
	DNSServers []string
}

// Spec is a pool as users write it: the Metal3 IPPool spec plus rackwire's
// excludedAddresses (each a single address, a start-end range or a CIDR).
type Spec struct {
	Pools             []EntrySpec
	Prefix            int
	Gateway           string
	DNSServers        []string
	ExcludedAddresses []string
	AllocateReserved  bool
}

// ParseSpec turns s into a Config. It reports every syntax error as a FieldError; the
// rules between fields (start <= end, same family, inside the subnet, prefix length) are
// Config.Validate's.
func ParseSpec(s Spec) (Config, error) {
	var errs FieldErrors
	addr := func(field, v string) netip.Addr {
		if v == "" {
			return netip.Addr{}
		}
		a, err := parseAddr(v)
		if err != nil {
			errs = append(errs, &FieldError{Field: field, Value: v, Detail: err.Error()})
		}
		return a
	}
	addrs := func(field string, vs []string) []netip.Addr {
		var out []netip.Addr
		for i, v := range vs {
			f := field + "[" + strconv.Itoa(i) + "]"
			if v == "" {
				errs = append(errs, &FieldError{Field: f, Detail: "must not be empty"})
				continue
			}
			out = append(out, addr(f, v))
		}
		return out
	}
	c := Config{
		Entries:          make([]Entry, len(s.Pools)),
		Prefix:           s.Prefix,
		AllocateReserved: s.AllocateReserved,
	}
	for i, e := range s.Pools {
		f := "pools[" + strconv.Itoa(i) + "]."
		c.Entries[i] = Entry{
			Start:      addr(f+"start", e.Start),
			End:        addr(f+"end", e.End),
			Prefix:     e.Prefix,
			Gateway:    addr(f+"gateway", e.Gateway),
			DNSServers: addrs(f+"dnsServers", e.DNSServers),
		}
		if e.Subnet != "" {
			p, err := parseSubnet(e.Subnet)
			if err != nil {
				errs = append(errs, &FieldError{Field: f + "subnet", Value: e.Subnet, Detail: err.Error()})
			}
			c.Entries[i].Subnet = p
		}
	}
	c.Gateway = addr("gateway", s.Gateway)
	c.DNSServers = addrs("dnsServers", s.DNSServers)
	for i, v := range s.ExcludedAddresses {
		r, err := parseRange(v)
		if err != nil {
			errs = append(errs, &FieldError{Field: "excludedAddresses[" + strconv.Itoa(i) + "]", Value: v, Detail: err.Error()})
			continue
		}
		c.Excluded = append(c.Excluded, r)
	}
	return c, errs.orNil()
}

// Build parses, validates and builds a pool in one go: what a webhook and a controller
// call on an IPPool spec. The error, if any, is FieldErrors.
func Build(s Spec, opts ...Option) (*Pool, error) {
	c, err := ParseSpec(s)
	if err != nil {
		return nil, err
	}
	return NewPool(c, opts...)
}
