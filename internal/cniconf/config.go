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

package cniconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// IPAMType is the ipam.type of rackwire's IPAM plugin.
const IPAMType = "rackwire"

// ErrNotRackwire means the configuration has no plugin with a rackwire IPAM: another
// network, nothing to do, nothing to report.
var ErrNotRackwire = errors.New("no plugin with ipam.type rackwire")

// Network is what a NAD's configuration says about a rackwire network.
type Network struct {
	// Name is the configuration's top-level name (the conflist's, else the plugin's): the
	// CNI network name, which IPAMClaim spec.network names.
	Name string
	// NetworkName is ipam.network_name, "" when unset: whereabouts then prefixes the names
	// of the network's IPPools and OverlappingRangeIPReservations with it.
	NetworkName string
	// PersistentIPs is allowPersistentIPs, at the top level of the plugin, of the conflist
	// or in the ipam section.
	PersistentIPs bool
	// Gateway is ipam.gateway; it is never handed out.
	Gateway netip.Addr
	// Ranges are range first, then ipRanges in order: an interface gets one address of each.
	Ranges []Range
	// SliceSize is ipam.node_slice_size as written, "" when unset.
	SliceSize string
}

// Range is one range of a network.
type Range struct {
	// Subnet is the range in CIDR notation, masked; addresses are given with its length.
	Subnet netip.Prefix
	// Start and End bound the addresses handed out (range_start, range_end or the
	// "start-end/len" form); invalid when unbounded.
	Start, End netip.Addr
	// Exclude lists the excluded prefixes (a single address is a /32 or /128).
	Exclude []netip.Prefix
}

type ipamConf struct {
	Type               string      `json:"type"`
	NetworkName        string      `json:"network_name"`
	Gateway            string      `json:"gateway"`
	SliceSize          string      `json:"node_slice_size"`
	AllowPersistentIPs bool        `json:"allowPersistentIPs"`
	IPRanges           []rangeConf `json:"ipRanges"`
	rangeConf
}

type rangeConf struct {
	Range      string   `json:"range"`
	RangeStart string   `json:"range_start"`
	RangeEnd   string   `json:"range_end"`
	Exclude    []string `json:"exclude"`
}

type pluginConf struct {
	Name               string       `json:"name"`
	AllowPersistentIPs bool         `json:"allowPersistentIPs"`
	IPAM               *ipamConf    `json:"ipam"`
	Plugins            []pluginConf `json:"plugins"`
}

// Parse reads a NAD's spec.config: a single plugin configuration or a conflist, the network
// being the plugin whose ipam.type is rackwire. It returns ErrNotRackwire when there is
// none, and an error naming the field when the rackwire section is wrong; Name and
// PersistentIPs are set even then, so that the error can be reported on the claims.
func Parse(config []byte) (Network, error) {
	var top pluginConf
	if err := json.Unmarshal(config, &top); err != nil {
		return Network{}, fmt.Errorf("config: not a CNI configuration: %w", err)
	}
	plugin, path := &top, "ipam"
	for i := range top.Plugins {
		if p := top.Plugins[i].IPAM; p != nil && p.Type == IPAMType {
			plugin, path = &top.Plugins[i], fmt.Sprintf("plugins[%d].ipam", i)
			break
		}
	}
	ipam := plugin.IPAM
	if ipam == nil || ipam.Type != IPAMType {
		return Network{}, ErrNotRackwire
	}
	n := Network{
		Name:          top.Name,
		NetworkName:   ipam.NetworkName,
		PersistentIPs: top.AllowPersistentIPs || plugin.AllowPersistentIPs || ipam.AllowPersistentIPs,
		SliceSize:     ipam.SliceSize,
	}
	if n.Name == "" {
		return n, errors.New("name: a CNI configuration needs a name")
	}
	if ipam.Gateway != "" {
		g, err := netip.ParseAddr(strings.TrimSpace(ipam.Gateway))
		if err != nil {
			return n, fmt.Errorf("%s.gateway: %q is not an address", path, ipam.Gateway)
		}
		n.Gateway = g.Unmap()
	}
	var confs []rangeConf
	var paths []string
	if ipam.Range != "" {
		confs, paths = append(confs, ipam.rangeConf), append(paths, path)
	}
	for i, r := range ipam.IPRanges {
		confs, paths = append(confs, r), append(paths, fmt.Sprintf("%s.ipRanges[%d]", path, i))
	}
	if len(confs) == 0 {
		return n, fmt.Errorf("%s.range: neither range nor ipRanges is set", path)
	}
	for i, c := range confs {
		r, err := ParseRange(c.Range, c.RangeStart, c.RangeEnd, c.Exclude)
		if err != nil {
			return n, fmt.Errorf("%s.%w", paths[i], err)
		}
		n.Ranges = append(n.Ranges, r)
	}
	return n, nil
}

// ParseRange reads one range as whereabouts' keys give it (range as a CIDR or "start-end/len",
// range_start, range_end, exclude); an error names the key, relative to the range.
func ParseRange(rng, start, end string, exclude []string) (Range, error) {
	c := rangeConf{Range: rng, RangeStart: start, RangeEnd: end, Exclude: exclude}
	var r Range
	cidr := c.Range
	if first, rest, ok := strings.Cut(c.Range, "-"); ok {
		// whereabouts' "start-end/len" form: the range is end's network.
		cidr = rest
		if c.RangeStart == "" {
			c.RangeStart = first
		}
		if c.RangeEnd == "" {
			c.RangeEnd, _, _ = strings.Cut(rest, "/")
		}
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(cidr))
	if err != nil {
		return r, fmt.Errorf("range: %q is not a CIDR", c.Range)
	}
	r.Subnet = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()).Masked()
	if p.Addr().Is4In6() {
		r.Subnet = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0)).Masked()
	}
	for _, b := range []struct {
		s, field string
		to       *netip.Addr
	}{{c.RangeStart, "range_start", &r.Start}, {c.RangeEnd, "range_end", &r.End}} {
		if b.s == "" {
			continue
		}
		a, err := netip.ParseAddr(strings.TrimSpace(b.s))
		if err != nil {
			return r, fmt.Errorf("%s: %q is not an address", b.field, b.s)
		}
		if a = a.Unmap(); !r.Subnet.Contains(a) {
			return r, fmt.Errorf("%s: %s is outside %s", b.field, a, r.Subnet)
		}
		*b.to = a
	}
	if r.Start.IsValid() && r.End.IsValid() && r.End.Less(r.Start) {
		return r, fmt.Errorf("range_end: %s is below range_start %s", r.End, r.Start)
	}
	for i, e := range c.Exclude {
		x, err := parseExclude(e)
		if err != nil {
			return r, fmt.Errorf("exclude[%d]: %q is neither a CIDR nor an address", i, e)
		}
		if x.Addr().Is4() != r.Subnet.Addr().Is4() {
			return r, fmt.Errorf("exclude[%d]: %s is not of the range's address family", i, x)
		}
		r.Exclude = append(r.Exclude, x)
	}
	return r, nil
}

func parseExclude(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return p, err
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// CIDR writes a of the range with the range's prefix length ("10.10.0.5/24"), as IPAMClaim
// status.ips and the CNI result give it.
func (r Range) CIDR(a netip.Addr) string {
	return netip.PrefixFrom(a, r.Subnet.Bits()).String()
}

// Same says whether two configurations of one network agree on what the allocator uses.
func (n Network) Same(o Network) bool {
	if n.Name != o.Name || n.NetworkName != o.NetworkName || n.Gateway != o.Gateway || len(n.Ranges) != len(o.Ranges) {
		return false
	}
	for i, r := range n.Ranges {
		q := o.Ranges[i]
		if r.Subnet != q.Subnet || r.Start != q.Start || r.End != q.End || len(r.Exclude) != len(q.Exclude) {
			return false
		}
		for j := range r.Exclude {
			if r.Exclude[j] != q.Exclude[j] {
				return false
			}
		}
	}
	return true
}
