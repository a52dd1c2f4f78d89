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
	"math"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
)

var addr = netip.MustParseAddr

func mustBuild(t testing.TB, s Spec, opts ...Option) *Pool {
	t.Helper()
	p, err := Build(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func seeded(seed uint64) Option { return WithRand(rand.New(rand.NewPCG(seed, seed))) }

func TestReserveRelease(t *testing.T) {
	p := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/29", Gateway: "10.0.0.1"}}})
	steps := []struct {
		op   func(netip.Addr) error
		a    string
		want error
	}{
		{p.Reserve, "10.0.0.3", nil},
		{p.Reserve, "10.0.0.3", ErrInUse},
		{p.Reserve, "10.0.0.1", ErrNotInPool}, // gateway
		{p.Reserve, "10.0.0.0", ErrNotInPool}, // network
		{p.Reserve, "10.0.0.7", ErrNotInPool}, // broadcast
		{p.Reserve, "10.0.0.8", ErrNotInPool},
		{p.Reserve, "fd00::1", ErrNotInPool},
		{p.Reserve, "", ErrNotInPool},
		{p.Release, "10.0.0.3", nil},
		{p.Release, "10.0.0.3", ErrNotInUse},
		{p.Release, "10.0.0.1", ErrNotInPool},
		{p.Release, "", ErrNotInPool},
	}
	for _, s := range steps {
		var a netip.Addr
		if s.a != "" {
			a = addr(s.a)
		}
		if err := s.op(a); !errors.Is(err, s.want) || (s.want == nil && err != nil) {
			t.Errorf("%s: got %v, want %v", s.a, err, s.want)
		}
	}
}

func TestAllocateSequentialFillsInOrder(t *testing.T) {
	p := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/29"}, {Subnet: "fd00::/126"}}, ExcludedAddresses: []string{"10.0.0.3"}})
	if err := p.Reserve(addr("10.0.0.2")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		a, err := p.Allocate(Sequential)
		if errors.Is(err, ErrExhausted) {
			break
		}
		got = append(got, a.String())
	}
	want := []string{"10.0.0.1", "10.0.0.4", "10.0.0.5", "10.0.0.6", "fd00::1", "fd00::2", "fd00::3"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if c := p.Counts(); c.Free.Uint64() != 0 || c.Used.Uint64() != 8 || c.Total.Uint64() != 8 {
		t.Errorf("Counts() = %v", c)
	}
	// A released address is the next one handed out again.
	if err := p.Release(addr("10.0.0.5")); err != nil {
		t.Fatal(err)
	}
	if a, _ := p.Allocate(Sequential); a != addr("10.0.0.5") {
		t.Errorf("Allocate after Release = %s", a)
	}
}

func TestAllocateInOrderFollowsTheEntries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    Spec
		reserve []string
		want    []string
	}{
		{"declared order, not address order",
			Spec{Pools: []EntrySpec{{Start: "192.168.0.10", End: "192.168.0.11"}, {Start: "10.0.0.5", End: "10.0.0.6"}}},
			nil, []string{"192.168.0.10", "192.168.0.11", "10.0.0.5", "10.0.0.6"}},
		{"holes and exclusions skipped, an overlapping entry's addresses served once",
			Spec{Pools: []EntrySpec{{Start: "10.0.0.8", End: "10.0.0.10"}, {Start: "10.0.0.1", End: "10.0.0.9"}}, ExcludedAddresses: []string{"10.0.0.2"}},
			[]string{"10.0.0.9", "10.0.0.3"}, []string{"10.0.0.8", "10.0.0.10", "10.0.0.1", "10.0.0.4", "10.0.0.5", "10.0.0.6", "10.0.0.7"}},
		{"IPv6 entry first", Spec{Pools: []EntrySpec{{Subnet: "fd00::/126"}, {Start: "10.0.0.1", End: "10.0.0.1"}}},
			nil, []string{"fd00::1", "fd00::2", "fd00::3", "10.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustBuild(t, tc.spec)
			for _, r := range tc.reserve {
				if err := p.Reserve(addr(r)); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for {
				a, err := p.Allocate(InOrder)
				if errors.Is(err, ErrExhausted) {
					break
				}
				got = append(got, a.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if c := p.Counts(); !c.Free.IsZero() {
				t.Errorf("Counts() = %v after exhaustion", c)
			}
		})
	}
}

func TestAllocateRandomDrawsEveryAddressOnce(t *testing.T) {
	p := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/24"}, {Subnet: "fd00::/120"}}}, seeded(7))
	seen := map[netip.Addr]bool{}
	for range 254 + 255 {
		a, err := p.Allocate(Random)
		if err != nil || seen[a] || !p.Contains(a) {
			t.Fatalf("Allocate(Random) = %s, %v (seen %v)", a, err, seen[a])
		}
		seen[a] = true
	}
	if _, err := p.Allocate(Random); !errors.Is(err, ErrExhausted) {
		t.Errorf("Allocate on a full pool = %v", err)
	}
}

// TestAllocateRandomIsUniform draws from a free space made of very unequal holes: a
// "random start, then scan" allocator would favour the address after the big gap.
func TestAllocateRandomIsUniform(t *testing.T) {
	p := mustBuild(t, Spec{Pools: []EntrySpec{{Start: "10.0.0.0", End: "10.0.0.99"}, {Start: "fd00::1", End: "fd00::2"}}}, seeded(42))
	free := map[netip.Addr]bool{addr("10.0.0.0"): true, addr("10.0.0.1"): true, addr("10.0.0.2"): true, addr("10.0.0.99"): true,
		addr("fd00::1"): true, addr("fd00::2"): true}
	for i := 50; i < 60; i++ {
		free[netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})] = true
	}
	for i := range 100 {
		if a := netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}); !free[a] {
			if err := p.Reserve(a); err != nil {
				t.Fatal(err)
			}
		}
	}
	const draws = 10000
	hits := map[netip.Addr]int{}
	for range draws * len(free) {
		a, err := p.Allocate(Random)
		if err != nil || !free[a] {
			t.Fatalf("Allocate(Random) = %s, %v", a, err)
		}
		hits[a]++
		if err := p.Release(a); err != nil {
			t.Fatal(err)
		}
	}
	for a := range free {
		// 5% is over five standard deviations (sqrt(10000) = 100).
		if n := hits[a]; n < draws*95/100 || n > draws*105/100 {
			t.Errorf("%s drawn %d times, want about %d", a, n, draws)
		}
	}
}

func TestAllocateRandomIsReproducible(t *testing.T) {
	draw := func() []netip.Addr {
		p := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "fd00::/64"}}}, seeded(3))
		var out []netip.Addr
		for range 10 {
			a, _ := p.Allocate(Random)
			out = append(out, a)
		}
		return out
	}
	if a, b := draw(), draw(); !slices.Equal(a, b) {
		t.Errorf("same seed, different draws: %v, %v", a, b)
	}
}

func TestUnknownStrategy(t *testing.T) {
	p := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/24"}}})
	if _, err := p.Allocate(Strategy(9)); err == nil {
		t.Error("Allocate(Strategy(9)) succeeded")
	}
	if Strategy(9).String() != "Strategy(9)" || Random.String() != "random" || Sequential.String() != "sequential" || InOrder.String() != "in-order" {
		t.Error("Strategy.String")
	}
}

func TestCountsIPv6(t *testing.T) {
	p := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "fd00::/48"}, {Subnet: "10.0.0.0/24"}}})
	c := p.Counts()
	// fd00::/48 minus its network address, plus 254.
	if got, want := c.Total.String(), "1208925819614629174706429"; got != want {
		t.Errorf("Total = %s, want %s", got, want)
	}
	if c.Total.Uint64() != math.MaxUint64 || c.Total.Int64() != math.MaxInt64 {
		t.Errorf("saturating accessors: %d %d", c.Total.Uint64(), c.Total.Int64())
	}
	if c.Total.Big().String() != c.Total.String() || c.Free.Cmp(c.Total) != 0 || !c.Used.IsZero() {
		t.Errorf("Counts() = %v", c)
	}
	for range 1000 {
		if _, err := p.Allocate(Random); err != nil {
			t.Fatal(err)
		}
	}
	c = p.Counts()
	if c.Used.Int64() != 1000 || c.Free.String() != "1208925819614629174705429" {
		t.Errorf("Counts() after 1000 = %v", c)
	}
	// The last address of the whole space is an ordinary address.
	q := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/120"}}})
	if err := q.Reserve(addr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")); err != nil {
		t.Error(err)
	}
	if err := q.Release(addr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")); err != nil {
		t.Error(err)
	}
	if got := ranges(q); got != "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff01-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" {
		t.Error(got)
	}
}

func TestLargestPool(t *testing.T) {
	// Every IPv6 address but one, and every IPv4 address: 2^128 - 1 + 2^32 does not fit.
	_, err := Build(Spec{Pools: []EntrySpec{{Start: "::1", End: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, {Start: "0.0.0.0", End: "255.255.255.255"}}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "pools" {
		t.Errorf("Build() = %v", err)
	}
	p := mustBuild(t, Spec{Pools: []EntrySpec{{Start: "::1", End: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}}}, seeded(1))
	if c := p.Counts(); c.Total.Cmp(Count{maxUint128}) != 0 {
		t.Errorf("Total = %s", c.Total)
	}
	for range 100 {
		if _, err := p.Allocate(Random); err != nil {
			t.Fatal(err)
		}
	}
	if a, _ := p.Allocate(Sequential); a != addr("::1") && !p.InUse(addr("::1")) {
		t.Errorf("Allocate(Sequential) = %s", a)
	}
}

func TestParams(t *testing.T) {
	p := mustBuild(t, Spec{
		Pools: []EntrySpec{
			{Start: "10.0.0.10", End: "10.0.0.20", Prefix: 25, Gateway: "10.0.0.1", DNSServers: []string{"10.0.0.53"}},
			{Subnet: "10.0.1.0/24"},
			{Subnet: "10.0.0.0/24"}, // overlaps the first entry, which wins there
			{Subnet: "fd00::/64"},
			{Start: "fd01::1", End: "fd01::9", Gateway: "fd01::fe"},
		},
		Prefix:     24,
		Gateway:    "10.0.1.1",
		DNSServers: []string{"8.8.8.8"},
	})
	for _, tc := range []struct {
		a       string
		entry   int
		prefix  int
		gateway string
		dns     string
	}{
		{"10.0.0.10", 0, 25, "10.0.0.1", "10.0.0.53"},
		{"10.0.0.20", 0, 25, "10.0.0.1", "10.0.0.53"},
		{"10.0.0.21", 2, 24, "10.0.1.1", "8.8.8.8"},
		{"10.0.1.1", 1, 24, "10.0.1.1", "8.8.8.8"}, // the gateway itself still has params
		{"fd00::5", 3, 24, "", "8.8.8.8"},          // pool prefix wins over the subnet, as in Metal3
		{"fd01::5", 4, 24, "fd01::fe", "8.8.8.8"},
	} {
		pa, ok := p.Params(addr(tc.a))
		var gw string
		if pa.Gateway.IsValid() {
			gw = pa.Gateway.String()
		}
		if !ok || pa.Entry != tc.entry || pa.Prefix != tc.prefix || gw != tc.gateway || len(pa.DNSServers) != 1 || pa.DNSServers[0].String() != tc.dns {
			t.Errorf("Params(%s) = %+v, %v", tc.a, pa, ok)
		}
	}
	if _, ok := p.Params(addr("10.0.2.1")); ok {
		t.Error("Params outside the pool")
	}
	// Without a pool prefix the subnet's length applies.
	q := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "fd00::/64"}, {Start: "10.0.0.1", End: "10.0.0.2"}}})
	if pa, _ := q.Params(addr("fd00::1")); pa.Prefix != 64 {
		t.Errorf("prefix from subnet = %d", pa.Prefix)
	}
	if pa, _ := q.Params(addr("10.0.0.1")); pa.Prefix != 0 || pa.Gateway.IsValid() || pa.DNSServers != nil {
		t.Errorf("no params = %+v", pa)
	}
}

func TestFreeRangesStopsEarly(t *testing.T) {
	p := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/24"}, {Subnet: "fd00::/64"}}}, seeded(1))
	for range 10 {
		if _, err := p.Allocate(Random); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for range p.FreeRanges() {
		n++
		break
	}
	for range p.Ranges() {
		n++
		break
	}
	if n != 2 {
		t.Error(n)
	}
}

// TestTreeStaysCompact checks that releasing joins free neighbours: after everything is
// allocated at random and released again, the tree is one node per free run.
func TestTreeStaysCompact(t *testing.T) {
	// A /18 spreads the tree over several node pages.
	p := mustBuild(t, Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/18"}}, ExcludedAddresses: []string{"10.0.1.0/24"}}, seeded(5))
	var got []netip.Addr
	for {
		a, err := p.Allocate(Random)
		if err != nil {
			break
		}
		if got = append(got, a); len(got) == 4000 {
			if n := p.fams[ipv4].free.len(); n < 2*pageSize {
				t.Fatalf("only %d free nodes", n)
			}
			verifyTree(t, &p.fams[ipv4].free)
		}
	}
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
	for _, a := range got {
		if err := p.Release(a); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.fams[ipv4].free.len(); n != 2 {
		t.Errorf("%d free nodes, want 2", n)
	}
	verifyTree(t, &p.fams[ipv4].free)
	if r := ranges(p); r != "10.0.0.1-10.0.0.255,10.0.2.0-10.0.63.254" {
		t.Error(r)
	}
}
