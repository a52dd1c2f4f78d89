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
	"net/netip"
	"strings"
)

// ReservationName is the name of the OverlappingRangeIPReservation that holds a: whereabouts
// v0.9.4's NormalizeIP, the address with ":" as "-" (a trailing ":" completed with "0"),
// prefixed by "<network_name>-" when the ipam configuration sets network_name.
func ReservationName(networkName string, a netip.Addr) string {
	s := a.Unmap().String()
	if strings.HasSuffix(s, ":") {
		s += "0"
	}
	s = strings.ReplaceAll(s, ":", "-")
	if networkName != "" {
		s = networkName + "-" + s
	}
	return s
}

// ReservedAddress is the address an OverlappingRangeIPReservation of the network holds,
// read from its name; false when the name is not one whereabouts gives in that network.
func ReservedAddress(networkName, objectName string) (netip.Addr, bool) {
	s := objectName
	if networkName != "" {
		var ok bool
		if s, ok = strings.CutPrefix(s, networkName+"-"); !ok {
			return netip.Addr{}, false
		}
	}
	a, err := netip.ParseAddr(strings.ReplaceAll(s, "-", ":"))
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a, ReservationName(networkName, a) == objectName
}

// PoolName names the whereabouts IPPool of a range, or of a node's slice of it (node set),
// as whereabouts v0.9.4's IPPoolName does.
func PoolName(networkName, node string, r netip.Prefix) string {
	name := NormalizeRange(r.String())
	if node != "" {
		name = node + "-" + name
	}
	if networkName != "" {
		name = networkName + "-" + name
	}
	return name
}

// NormalizeRange is whereabouts' normalizeRange: a CIDR as a name part.
func NormalizeRange(r string) string {
	if strings.HasSuffix(r, ":") {
		r += "0"
	}
	return strings.NewReplacer(":", "-", "/", "-").Replace(r)
}

// AnnotationSharedWithWhereabouts lists, on a NodeSlicePool, the NADs (namespace/name) whose
// whereabouts binaries allocate from its slices: the manager writes it, and the plugin
// refuses the ADDs of a configuration there without whereabouts_lease.
const AnnotationSharedWithWhereabouts = "rackwire.metal3.io/shared-with-whereabouts"

// RangeOfPoolName is the range a pool name's tail, past its network_name, names when it is
// a range and nothing else: the network's whole-range pool.
func RangeOfPoolName(tail string) (netip.Prefix, bool) {
	j := strings.LastIndexByte(tail, '-')
	if j <= 0 {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(strings.ReplaceAll(tail[:j], "-", ":") + "/" + tail[j+1:])
	if err != nil || NormalizeRange(p.String()) != tail {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// RangesInPoolName is every range a pool name's tail, past its network_name, may end with:
// the name may hold a node's name before the range, and both may hold "-" (NormalizeRange).
func RangesInPoolName(tail string) []netip.Prefix {
	var out []netip.Prefix
	for i := -1; i < len(tail); i++ {
		if i >= 0 && tail[i] != '-' {
			continue
		}
		if p, ok := RangeOfPoolName(tail[i+1:]); ok {
			out = append(out, p)
		}
	}
	return out
}
