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
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "10.0.0.5", want: "10.0.0.5"},
		{in: " 10.0.0.5 ", want: "10.0.0.5"},
		{in: "10.0.0.5-10.0.0.9", want: "10.0.0.5-10.0.0.9"},
		{in: "10.0.0.5 - 10.0.0.9", want: "10.0.0.5-10.0.0.9"},
		{in: "10.0.0.5-10.0.0.5", want: "10.0.0.5"},
		{in: "10.0.0.16/28", want: "10.0.0.16-10.0.0.31"},
		{in: "10.0.0.17/28", want: "10.0.0.16-10.0.0.31"},
		{in: "0.0.0.0/0", want: "0.0.0.0-255.255.255.255"},
		{in: "fd00::/64", want: "fd00::-fd00::ffff:ffff:ffff:ffff"},
		{in: "fd00::1-fd00::1:0", want: "fd00::1-fd00::1:0"},
		{in: "::/0", want: "::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{in: "", err: `"": not an IP address`},
		{in: "10.0.0", err: "not an IP address"},
		{in: "010.0.0.1", err: "not an IP address"},
		{in: "10.0.0.9-10.0.0.1", err: "last address 10.0.0.1 is lower than first address 10.0.0.9"},
		{in: "10.0.0.1-fd00::1", err: "range mixes IPv4 first address 10.0.0.1 and IPv6 last address fd00::1"},
		{in: "10.0.0.1-", err: `last address "": not an IP address`},
		{in: "x-10.0.0.1", err: `first address "x": not an IP address`},
		{in: "10.0.0.1-10.0.0.2-10.0.0.3", err: "not an IP address"},
		{in: "10.0.0.0/33", err: "not a CIDR"},
		{in: "fe80::1%eth0", err: "zones are not allowed"},
		{in: "::ffff:10.0.0.1", err: "IPv4-mapped"},
		{in: "::ffff:10.0.0.0/120", err: "IPv4-mapped"},
	} {
		r, err := ParseRange(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseRange(%q) = %v, %v; want error containing %q", tc.in, r, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("ParseRange(%q): %v", tc.in, err)
		case tc.err == "" && r.String() != tc.want:
			t.Errorf("ParseRange(%q) = %s, want %s", tc.in, r, tc.want)
		}
	}
}

func TestRangeSize(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.0/24":    "256",
		"10.0.0.5":       "1",
		"fd00::/64":      "18446744073709551616",
		"fd00::/48":      "1208925819614629174706176",
		"::/1":           "170141183460469231731687303715884105728",
		"0.0.0.0/0":      "4294967296",
		"fd00::-fd00::2": "3",
	} {
		if got := mustRange(t, in).Size().String(); got != want {
			t.Errorf("Size(%s) = %s, want %s", in, got, want)
		}
	}
}

func mustRange(t *testing.T, s string) Range {
	t.Helper()
	r, err := ParseRange(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ranges(p *Pool) string {
	var out []string
	for r := range p.Ranges() {
		out = append(out, r.String())
	}
	return strings.Join(out, ",")
}

// TestPoolRanges pins down which addresses a spec hands out: the entry rules and every
// kind of exclusion.
func TestPoolRanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"subnet only is network+1 to broadcast-1",
			Spec{Pools: []EntrySpec{{Subnet: "192.168.0.0/24"}}}, "192.168.0.1-192.168.0.254"},
		{"subnet host bits are cleared",
			Spec{Pools: []EntrySpec{{Subnet: "192.168.1.1/26"}}}, "192.168.1.1-192.168.1.62"},
		{"start and subnet run to the last usable",
			Spec{Pools: []EntrySpec{{Start: "192.168.0.10", Subnet: "192.168.0.0/24"}}}, "192.168.0.10-192.168.0.254"},
		{"end and subnet run from the first usable",
			Spec{Pools: []EntrySpec{{End: "192.168.0.20", Subnet: "192.168.0.0/24"}}}, "192.168.0.1-192.168.0.20"},
		{"start and end",
			Spec{Pools: []EntrySpec{{Start: "192.168.0.10", End: "192.168.0.15"}}}, "192.168.0.10-192.168.0.15"},
		{"network and broadcast of a subnet entry are excluded even inside start-end",
			Spec{Pools: []EntrySpec{{Start: "192.168.0.0", End: "192.168.0.255", Subnet: "192.168.0.0/24"}}}, "192.168.0.1-192.168.0.254"},
		{"without a subnet nothing is inferred",
			Spec{Pools: []EntrySpec{{Start: "192.168.0.0", End: "192.168.0.255", Prefix: 24}}}, "192.168.0.0-192.168.0.255"},
		{"allocateReserved keeps network and broadcast",
			Spec{Pools: []EntrySpec{{Subnet: "192.168.0.0/24", Gateway: "192.168.0.1"}}, AllocateReserved: true}, "192.168.0.0,192.168.0.2-192.168.0.255"},
		{"entry gateway is excluded",
			Spec{Pools: []EntrySpec{{Subnet: "192.168.0.0/24", Gateway: "192.168.0.1"}}}, "192.168.0.2-192.168.0.254"},
		{"pool gateway is excluded from every entry",
			Spec{Pools: []EntrySpec{{Start: "10.0.0.1", End: "10.0.0.9", Gateway: "10.0.0.1"}, {Start: "10.0.0.20", End: "10.0.0.29"}}, Gateway: "10.0.0.25"},
			"10.0.0.2-10.0.0.9,10.0.0.20-10.0.0.24,10.0.0.26-10.0.0.29"},
		{"excludedAddresses: address, range, CIDR",
			Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/24"}}, ExcludedAddresses: []string{"10.0.0.5", "10.0.0.10-10.0.0.20", "10.0.0.128/25"}},
			"10.0.0.1-10.0.0.4,10.0.0.6-10.0.0.9,10.0.0.21-10.0.0.127"},
		{"exclusions outside the pool are harmless",
			Spec{Pools: []EntrySpec{{Start: "10.0.0.1", End: "10.0.0.3"}}, ExcludedAddresses: []string{"10.9.0.0/16", "fd00::/8"}}, "10.0.0.1-10.0.0.3"},
		{"/31 and /32 have no network or broadcast",
			Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/31"}, {Subnet: "10.0.0.9/32"}}}, "10.0.0.0-10.0.0.1,10.0.0.9"},
		{"IPv6 subnet is network+1 to the last address",
			Spec{Pools: []EntrySpec{{Subnet: "fd00::/120"}}}, "fd00::1-fd00::ff"},
		{"IPv6 /127 keeps both",
			Spec{Pools: []EntrySpec{{Subnet: "fd00::/127"}}}, "fd00::-fd00::1"},
		{"overlapping and adjacent entries merge",
			Spec{Pools: []EntrySpec{{Start: "10.0.0.1", End: "10.0.0.10"}, {Start: "10.0.0.5", End: "10.0.0.20"}, {Start: "10.0.0.21", End: "10.0.0.21"}}},
			"10.0.0.1-10.0.0.21"},
		{"both families, IPv4 first",
			Spec{Pools: []EntrySpec{{Subnet: "fd00::/126"}, {Subnet: "10.0.0.0/30"}}}, "10.0.0.1-10.0.0.2,fd00::1-fd00::3"},
		{"no entries is an empty pool", Spec{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := ranges(p); got != tc.want {
				t.Errorf("ranges = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestSpecErrors checks that every invalid spec names the offending field, the way a
// webhook reports it.
func TestSpecErrors(t *testing.T) {
	v4 := EntrySpec{Start: "10.0.0.1", End: "10.0.0.9"}
	for _, tc := range []struct {
		name         string
		spec         Spec
		field, value string
		detail       string
	}{
		{"empty entry", Spec{Pools: []EntrySpec{{}}}, "pools[0]", "", "set start and end, or subnet"},
		{"start without end or subnet", Spec{Pools: []EntrySpec{{Start: "10.0.0.1"}}}, "pools[0].end", "", "required unless subnet is set"},
		{"end without start or subnet", Spec{Pools: []EntrySpec{{End: "10.0.0.1"}}}, "pools[0].start", "", "required unless subnet is set"},
		{"index of the entry", Spec{Pools: []EntrySpec{v4, v4, {Start: "10.0.0.9", End: "10.0.0.1"}}}, "pools[2].end", "10.0.0.1", "lower than start 10.0.0.9"},
		{"mixed start and end", Spec{Pools: []EntrySpec{{Start: "10.0.0.1", End: "fd00::1"}}}, "pools[0].end", "fd00::1", "IPv6 address, but start 10.0.0.1 is IPv4"},
		{"mixed subnet and start", Spec{Pools: []EntrySpec{{Start: "fd00::1", Subnet: "10.0.0.0/24"}}}, "pools[0].start", "fd00::1", "IPv6 address, but subnet 10.0.0.0/24 is IPv4"},
		{"gateway of the other family", Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/24", Gateway: "fd00::1"}}}, "pools[0].gateway", "fd00::1", "IPv6 address, but the entry is IPv4"},
		{"start outside subnet", Spec{Pools: []EntrySpec{{Start: "10.0.1.1", Subnet: "10.0.0.0/24"}}}, "pools[0].start", "10.0.1.1", "outside subnet 10.0.0.0/24"},
		{"end outside subnet", Spec{Pools: []EntrySpec{{End: "10.0.1.1", Subnet: "10.0.0.0/24"}}}, "pools[0].end", "10.0.1.1", "outside subnet 10.0.0.0/24"},
		{"start past the last usable", Spec{Pools: []EntrySpec{{Start: "10.0.0.255", Subnet: "10.0.0.0/24"}}}, "pools[0].start", "10.0.0.255", "after the last usable address 10.0.0.254 of subnet 10.0.0.0/24"},
		{"end before the first usable", Spec{Pools: []EntrySpec{{End: "10.0.0.0", Subnet: "10.0.0.0/24"}}}, "pools[0].end", "10.0.0.0", "before the first usable address 10.0.0.1 of subnet 10.0.0.0/24"},
		{"IPv4 entry prefix", Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/24", Prefix: 33}}}, "pools[0].prefix", "33", "must be between 0 and 32 for an IPv4 entry"},
		{"IPv6 entry prefix", Spec{Pools: []EntrySpec{{Subnet: "fd00::/64", Prefix: 129}}}, "pools[0].prefix", "129", "must be between 0 and 128 for an IPv6 entry"},
		{"negative prefix", Spec{Pools: []EntrySpec{v4}, Prefix: -1}, "prefix", "-1", "must be between 0 and 128"},
		{"pool prefix too long for IPv4", Spec{Pools: []EntrySpec{{Subnet: "fd00::/64"}, v4}, Prefix: 64}, "prefix", "64", "longer than 32 bits, but pools[1] is IPv4"},
		{"pool gateway of a missing family", Spec{Pools: []EntrySpec{v4}, Gateway: "fd00::1"}, "gateway", "fd00::1", "IPv6 gateway, but no entry of pools is IPv6"},
		{"bad start", Spec{Pools: []EntrySpec{{Start: "10.0.0.300", End: "10.0.0.1"}}}, "pools[0].start", "10.0.0.300", "not an IP address"},
		{"bad subnet", Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/33"}}}, "pools[0].subnet", "10.0.0.0/33", "not a CIDR"},
		{"zone", Spec{Pools: []EntrySpec{{Start: "fe80::1%eth0", End: "fe80::9"}}}, "pools[0].start", "fe80::1%eth0", "zones are not allowed"},
		{"bad entry DNS", Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/24", DNSServers: []string{"8.8.8.8", "dns"}}}}, "pools[0].dnsServers[1]", "dns", "not an IP address"},
		{"empty pool DNS", Spec{Pools: []EntrySpec{v4}, DNSServers: []string{""}}, "dnsServers[0]", "", "must not be empty"},
		{"reversed exclusion", Spec{Pools: []EntrySpec{v4}, ExcludedAddresses: []string{"10.0.0.1", "10.0.0.9-10.0.0.1"}}, "excludedAddresses[1]", "10.0.0.9-10.0.0.1", "last address 10.0.0.1 is lower than first address 10.0.0.9"},
		{"mixed exclusion", Spec{Pools: []EntrySpec{v4}, ExcludedAddresses: []string{"10.0.0.1-fd00::1"}}, "excludedAddresses[0]", "10.0.0.1-fd00::1", "range mixes IPv4"},
		{"the whole IPv6 space", Spec{Pools: []EntrySpec{{Start: "::", End: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}}}, "pools", "", "2^128 addresses or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.spec)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Build() = %v, want a FieldError", err)
			}
			if fe.Field != tc.field || fe.Value != tc.value || !strings.Contains(fe.Detail, tc.detail) {
				t.Errorf("got %q / %q / %q\nwant %q / %q / %q", fe.Field, fe.Value, fe.Detail, tc.field, tc.value, tc.detail)
			}
		})
	}
}

func TestSpecErrorsAreAllReported(t *testing.T) {
	_, err := Build(Spec{Pools: []EntrySpec{{Start: "x", End: "y"}, {Subnet: "z"}}, Gateway: "g"})
	var fes FieldErrors
	if !errors.As(err, &fes) || len(fes) != 4 {
		t.Fatalf("Build() = %v, want four FieldErrors", err)
	}
	want := `pools[0].start: "x": not an IP address; pools[0].end: "y": not an IP address; pools[1].subnet: "z": not a CIDR; gateway: "g": not an IP address`
	if err.Error() != want {
		t.Errorf("Error() = %s\nwant %s", err, want)
	}
}

func TestConfigAcceptsMappedAddresses(t *testing.T) {
	// What netip.AddrFromSlice makes of a 16-byte net.IP.
	mapped := func(s string) netip.Addr { return netip.AddrFrom16(netip.MustParseAddr(s).As16()) }
	p, err := NewPool(Config{Entries: []Entry{{Start: mapped("10.0.0.1"), End: mapped("10.0.0.3"), Gateway: mapped("10.0.0.1")}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ranges(p); got != "10.0.0.2-10.0.0.3" {
		t.Errorf("ranges = %s", got)
	}
	if err := p.Reserve(mapped("10.0.0.2")); err != nil {
		t.Error(err)
	}
	if !p.InUse(netip.MustParseAddr("10.0.0.2")) {
		t.Error("10.0.0.2 not in use after reserving ::ffff:10.0.0.2")
	}
}
