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

package holder

import (
	"net/netip"
	"strings"

	"github.com/rackwire/rackwire/internal/cniconf"
)

// AddressAt is the address of an IPPool allocation key: its decimal offset from the network
// address of the pool's range. False when the key is not an offset inside the range.
func AddressAt(pool netip.Prefix, key string) (netip.Addr, bool) {
	// whereabouts' reading, negative keys (offsets from 2^63) included.
	a, err := cniconf.AtOffset(pool, key)
	return a, err == nil
}

// Scope is the IPPools and reservations of one reservation scope: whereabouts prefixes
// both with network_name, and the networks without one share unprefixed names.
type Scope struct {
	// NetworkName is network_name, "" for the unnamed scope.
	NetworkName string
	// Ranges are the ranges of the scope's networks.
	Ranges []netip.Prefix
	// Named are the network names of the other scopes: in the unnamed scope, a pool whose
	// name starts with one of them is that network's.
	Named []string
}

// Within says whether a lies in one of the scope's ranges.
func (s Scope) Within(a netip.Addr) bool {
	for _, r := range s.Ranges {
		if r.Contains(a) {
			return true
		}
	}
	return false
}

// OwnsPool says whether the IPPool (name, spec.range) is one of the scope's: a range of the
// scope, or a node's slice of one, named as whereabouts names them.
func (s Scope) OwnsPool(name, rawRange string) bool {
	poolRange, err := netip.ParsePrefix(strings.TrimSpace(rawRange))
	if err != nil {
		return false
	}
	inside := false
	for _, r := range s.Ranges {
		if r.Bits() <= poolRange.Bits() && r.Contains(poolRange.Addr()) && r.Addr().Is4() == poolRange.Addr().Is4() {
			inside = true
			break
		}
	}
	if !inside {
		return false
	}
	rest, ok := strings.CutSuffix(name, cniconf.NormalizeRange(rawRange))
	if !ok {
		return false
	}
	if s.NetworkName != "" {
		if rest, ok = strings.CutPrefix(rest, s.NetworkName); !ok {
			return false
		}
		// "<network>-<range>" or "<network>-<node>-<slice>".
		return rest == "-" || (strings.HasPrefix(rest, "-") && strings.HasSuffix(rest, "-") && len(rest) > 2)
	}
	for _, other := range s.Named {
		if strings.HasPrefix(name, other+"-") {
			return false
		}
	}
	// "<range>" or "<node>-<slice>".
	return rest == "" || (strings.HasSuffix(rest, "-") && len(rest) > 1)
}

// Offset is the allocation key of a in pool, as the plugin and whereabouts write it (offsets
// from 2^63 as negative int64); false when a is outside the range.
func Offset(pool netip.Prefix, a netip.Addr) (string, bool) {
	if !pool.Contains(a) {
		return "", false
	}
	return cniconf.Offset(pool, a), true
}
