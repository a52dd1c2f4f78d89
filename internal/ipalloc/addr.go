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
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// family indexes the per-family state of a Pool. IPv4 sorts before IPv6 so that
// Sequential hands out IPv4 first in a pool of both families.
type family uint8

const (
	ipv4 family = iota
	ipv6
)

func familyOf(a netip.Addr) family {
	if a.Is4() {
		return ipv4
	}
	return ipv6
}

func (f family) String() string {
	if f == ipv4 {
		return "IPv4"
	}
	return "IPv6"
}

func (f family) bits() int {
	if f == ipv4 {
		return 32
	}
	return 128
}

// key maps an address to its position in its family's space; IPv4 uses the low 32 bits.
func key(a netip.Addr) uint128 {
	if a.Is4() {
		b := a.As4()
		return u64(uint64(binary.BigEndian.Uint32(b[:])))
	}
	b := a.As16()
	return uint128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

func addrOf(k uint128, f family) netip.Addr {
	if f == ipv4 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(k.lo))
		return netip.AddrFrom4(b)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], k.hi)
	binary.BigEndian.PutUint64(b[8:], k.lo)
	return netip.AddrFrom16(b)
}

// canonical is what operations accept: net.IP converted with netip.AddrFromSlice comes as
// IPv4-mapped IPv6, and a zone says nothing about which address it is. Pools never hold
// IPv4-mapped addresses (the parsers refuse them), so unmapping cannot change the answer.
func canonical(a netip.Addr) netip.Addr {
	return a.Unmap().WithZone("")
}

// ParseAddr parses one address as users write it. It refuses zones and IPv4-mapped IPv6
// addresses: the first are meaningless in a pool and the second would make 10.0.0.1 and
// ::ffff:10.0.0.1 two different addresses.
func ParseAddr(s string) (netip.Addr, error) {
	a, err := parseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q: %w", s, err)
	}
	return a, nil
}

// ParseSubnet parses a CIDR. Host bits are allowed and cleared ("192.168.1.1/26" is
// 192.168.1.0/26), as net.ParseCIDR and Metal3 do.
func ParseSubnet(s string) (netip.Prefix, error) {
	p, err := parseSubnet(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q: %w", s, err)
	}
	return p, nil
}

// parseAddr and parseSubnet leave the input out of their errors: the callers that have a
// field name report the value next to it.
func parseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, errors.New("not an IP address")
	}
	return a, checkPlain(a)
}

func parseSubnet(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, errors.New("not a CIDR")
	}
	return p.Masked(), checkPlain(p.Addr())
}

func checkPlain(a netip.Addr) error {
	switch {
	case a.Zone() != "":
		return errors.New("zones are not allowed")
	case a.Is4In6():
		return errors.New("IPv4-mapped IPv6 addresses are not allowed, write the IPv4 form")
	}
	return nil
}

// lastOf returns the last address of a masked prefix.
func lastOf(p netip.Prefix) uint128 {
	k := key(p.Addr())
	host := p.Addr().BitLen() - p.Bits()
	switch {
	case host == 0:
		return k
	case host < 64:
		return uint128{k.hi, k.lo | (1<<host - 1)}
	case host == 64:
		return uint128{k.hi, ^uint64(0)}
	case host < 128:
		return uint128{k.hi | (1<<(host-64) - 1), ^uint64(0)}
	}
	return maxUint128
}

// hasReserved reports whether a subnet has a network (and, for IPv4, broadcast) address
// to keep out. Point-to-point /31 and /127 (RFC 3021, RFC 6164) and host routes have none.
func hasReserved(p netip.Prefix) bool {
	return p.Bits() < p.Addr().BitLen()-1
}

// usable returns the first and last usable address of a subnet: network+1 and, for IPv4,
// broadcast-1 (for IPv6, the last address). With reserved set the whole subnet is usable.
func usable(p netip.Prefix, reserved bool) (first, last uint128) {
	first, last = key(p.Addr()), lastOf(p)
	if reserved || !hasReserved(p) {
		return first, last
	}
	first = first.inc()
	if p.Addr().Is4() {
		last = last.dec()
	}
	return first, last
}
