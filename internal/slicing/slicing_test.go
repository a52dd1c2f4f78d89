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

package slicing

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func mustNetwork(t testing.TB, config string) Network {
	t.Helper()
	n, err := ParseNetwork([]byte(config))
	if err != nil {
		t.Fatalf("ParseNetwork(%s): %v", config, err)
	}
	return n
}

func TestParseNetwork(t *testing.T) {
	cases := []struct {
		name, config, network, rng, err string
		sliceBits                       int
		notSliced                       bool
	}{
		{name: "plain, network_name", config: `{"name":"c","type":"macvlan","ipam":{"type":"whereabouts","range":"10.0.0.0/16","node_slice_size":"/24","network_name":"blue"}}`,
			network: "blue", rng: "10.0.0.0/16", sliceBits: 24},
		{name: "name when no network_name, host bits masked as whereabouts does", config: `{"name":"c","ipam":{"type":"whereabouts","range":"192.168.2.225/24","node_slice_size":"26"}}`,
			network: "c", rng: "192.168.2.0/24", sliceBits: 26},
		{name: "conflist, second plugin, rackwire ipam", config: `{"name":"lst","plugins":[{"type":"tuning"},{"type":"bridge","ipam":{"type":"rackwire","range":"fd00::/64","node_slice_size":"/80"}}]}`,
			network: "lst", rng: "fd00::/64", sliceBits: 80},
		{name: "ipRanges, first one", config: `{"name":"c","ipam":{"type":"whereabouts","ipRanges":[{"range":"10.1.0.0/24"},{"range":"10.2.0.0/24"}],"node_slice_size":"/28"}}`,
			network: "c", rng: "10.1.0.0/24", sliceBits: 28},
		{name: "start-end/cidr form", config: `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.16-10.0.0.200/24","node_slice_size":"/28"}}`,
			network: "c", rng: "10.0.0.0/24", sliceBits: 28},
		{name: "host-local", config: `{"name":"c","ipam":{"type":"host-local","subnet":"10.0.0.0/24"}}`, notSliced: true},
		{name: "whereabouts without slices", config: `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24"}}`, notSliced: true},
		{name: "no ipam", config: `{"name":"c","type":"bridge"}`, notSliced: true},
		{name: "junk json", config: `{"name":`, err: "config: not a CNI configuration"},
		{name: "bad slice size", config: `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","node_slice_size":"/abc"}}`, err: "ipam.node_slice_size"},
		{name: "slice larger than range", config: `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","node_slice_size":"/20"}}`, err: "larger than the range"},
		{name: "v4 slice /33", config: `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","node_slice_size":"/33"}}`, err: "longer than an IPv4 address"},
		{name: "too many slices", config: `{"name":"c","ipam":{"type":"whereabouts","range":"fd00::/48","node_slice_size":"/112"}}`, err: "more than 2^32"},
		{name: "no range", config: `{"name":"c","ipam":{"type":"whereabouts","node_slice_size":"/28"}}`, err: "ipam.range"},
		{name: "bad range", config: `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0/24","node_slice_size":"/28"}}`, err: "ipam.range"},
		{name: "bad exclude", config: `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","exclude":["x"],"node_slice_size":"/28"}}`, err: "ipam.exclude[0]"},
		{name: "start outside", config: `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","range_start":"10.0.1.1","node_slice_size":"/28"}}`, err: "range_start"},
		{name: "exclude of the other family", config: `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","exclude":["fd00::/64"],"node_slice_size":"/28"}}`, err: "exclude[0]"},
		{name: "no name at all", config: `{"ipam":{"type":"whereabouts","range":"10.0.0.0/24","node_slice_size":"/28"}}`, err: "network_name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := ParseNetwork([]byte(c.config))
			switch {
			case c.notSliced:
				if !errors.Is(err, ErrNotSliced) {
					t.Fatalf("got %v, want ErrNotSliced", err)
				}
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want an error containing %q", err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			case n.Name != c.network || n.Range.String() != c.rng || n.SliceBits != c.sliceBits:
				t.Fatalf("got %s %s /%d, want %s %s /%d", n.Name, n.Range, n.SliceBits, c.network, c.rng, c.sliceBits)
			}
		})
	}
}

// TestGridMatchesWhereabouts checks the slices whereabouts' DivideRangeBySize lists for the
// same input, and IPv6 without enumeration.
func TestGridMatchesWhereabouts(t *testing.T) {
	cases := []struct {
		rng   string
		bits  int
		count uint64
		want  map[uint64]string
	}{
		{"10.0.0.0/24", 26, 4, map[uint64]string{0: "10.0.0.0/26", 1: "10.0.0.64/26", 3: "10.0.0.192/26"}},
		{"10.0.0.0/8", 22, 1 << 14, map[uint64]string{0: "10.0.0.0/22", 1: "10.0.4.0/22", 16383: "10.255.252.0/22"}},
		{"10.0.0.0/24", 24, 1, map[uint64]string{0: "10.0.0.0/24"}},
		{"192.168.0.0/30", 32, 4, map[uint64]string{3: "192.168.0.3/32"}},
		{"fd00::/64", 80, 1 << 16, map[uint64]string{0: "fd00::/80", 1: "fd00::1:0:0:0/80", 65535: "fd00::ffff:0:0:0/80"}},
		{"2001:db8::/32", 64, 1 << 32, map[uint64]string{1<<32 - 1: "2001:db8:ffff:ffff::/64"}},
		{"::/0", 32, 1 << 32, map[uint64]string{1<<32 - 1: "ffff:ffff::/32"}},
	}
	for _, c := range cases {
		g, err := NewGrid(netip.MustParsePrefix(c.rng), c.bits)
		if err != nil {
			t.Fatal(err)
		}
		if g.Count() != c.count {
			t.Errorf("%s /%d: %d slices, want %d", c.rng, c.bits, g.Count(), c.count)
		}
		for i, want := range c.want {
			got := g.Slice(i)
			if got.String() != want {
				t.Errorf("%s /%d slice %d = %s, want %s", c.rng, c.bits, i, got, want)
			}
			if back, ok := g.Index(got); !ok || back != i {
				t.Errorf("Index(%s) = %d %v, want %d", got, back, ok, i)
			}
		}
	}
}

func TestAssignerBoundsAndExclusions(t *testing.T) {
	// 10.0.0.0/24 in /28: 16 slices. range_start .20 drops slices 0 and 1 (.0-.31 partly
	// outside), range_end .239 drops 15, exclude .64/27 drops 4 and 5: 11 left.
	n := mustNetwork(t, `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","range_start":"10.0.0.20","range_end":"10.0.0.239","exclude":["10.0.0.64/27"],"node_slice_size":"/28"}}`)
	a, err := NewAssigner(n)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Usable(); got != 11 {
		t.Fatalf("usable %d, want 11", got)
	}
	var got []string
	for i := range 12 {
		s, ok := a.Assign(fmt.Sprintf("n%d", i))
		if !ok {
			got = append(got, "none")
			continue
		}
		got = append(got, s.String())
	}
	want := "10.0.0.32/28 10.0.0.48/28 10.0.0.96/28 10.0.0.112/28 10.0.0.128/28 10.0.0.144/28 10.0.0.160/28 10.0.0.176/28 10.0.0.192/28 10.0.0.208/28 10.0.0.224/28 none"
	if strings.Join(got, " ") != want {
		t.Fatalf("assigned %s\nwant     %s", strings.Join(got, " "), want)
	}
	a.Release("n2")
	if s, _ := a.Assign("late"); s.String() != "10.0.0.96/28" {
		t.Fatalf("a released slice goes to the next node: got %s", s)
	}
	if l := a.Listing(100); len(l) != 11 || l[0].Slice.String() != "10.0.0.32/28" || l[2].Node != "late" {
		t.Fatalf("listing %v", l)
	}
}

func TestAssignerHolds(t *testing.T) {
	n := mustNetwork(t, `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","node_slice_size":"/26"}}`)
	a, _ := NewAssigner(n)
	for _, node := range []string{"a", "b", "c"} {
		a.Assign(node)
	}
	// b is deleted while its IPPool still holds addresses: its slice goes to nobody else,
	// but to b again if it comes back.
	a.Release("b")
	a.SetHolds([]Hold{{Prefix: netip.MustParsePrefix("10.0.0.64/26"), Node: "b"}})
	if s, _ := a.Assign("d"); s.String() != "10.0.0.192/26" {
		t.Fatalf("d got %s, want the free 10.0.0.192/26", s)
	}
	if _, ok := a.Assign("e"); ok {
		t.Fatal("e got the held slice")
	}
	if held, count := a.Held(10); count != 1 || held[0].Node != "b" || held[0].Slice.String() != "10.0.0.64/26" {
		t.Fatalf("held %v %d", held, count)
	}
	if s, _ := a.Assign("b"); s.String() != "10.0.0.64/26" {
		t.Fatalf("b back got %s", s)
	}
	a.Release("b")
	a.SetHolds(nil)
	if s, _ := a.Assign("e"); s.String() != "10.0.0.64/26" {
		t.Fatalf("once released, e gets it: got %s", s)
	}
}

// TestReslicingHoldsOldSlices: a range re-cut into smaller slices keeps every new slice that
// touches an old slice with addresses away from every node, its old holder included (its
// new IPPool would not see the old one's addresses); a re-cut into larger slices likewise.
func TestReslicingHoldsOldSlices(t *testing.T) {
	n := mustNetwork(t, `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","node_slice_size":"/28"}}`)
	a, _ := NewAssigner(n)
	a.SetHolds([]Hold{{Prefix: netip.MustParsePrefix("10.0.0.0/26"), Node: "a"}})
	if s, _ := a.Assign("a"); s.String() != "10.0.0.64/28" {
		t.Fatalf("a got %s, want the first slice past its old /26", s)
	}
	n2 := mustNetwork(t, `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/24","node_slice_size":"/25"}}`)
	b, _ := NewAssigner(n2)
	b.SetHolds([]Hold{{Prefix: netip.MustParsePrefix("10.0.0.64/28"), Node: "a"}})
	if b.Keep("a", netip.MustParsePrefix("10.0.0.0/25")) {
		t.Fatal("a kept a /25 holding its old /28")
	}
	if s, _ := b.Assign("a"); s.String() != "10.0.0.128/25" {
		t.Fatalf("a got %s", s)
	}
}

func TestAssignerIPv6NeverEnumerates(t *testing.T) {
	n := mustNetwork(t, `{"name":"c","ipam":{"type":"whereabouts","range":"fd00::/32","node_slice_size":"/64"}}`)
	a, _ := NewAssigner(n)
	for i := range 1000 {
		a.Assign(fmt.Sprintf("n%d", i))
	}
	if s, _ := a.Lookup("n999"); s.String() != "fd00:0:0:3e7::/64" {
		t.Fatalf("n999 got %s", s)
	}
	if l := a.Listing(8192); len(l) != 1000 || l[999].Node != "n999" {
		t.Fatalf("listing of a 2^32-slice pool has %d entries, want the 1000 given ones", len(l))
	}
	if a.Usable() != 1<<32 {
		t.Fatalf("usable %d", a.Usable())
	}
}

func TestPoolNamesAreWhereabouts(t *testing.T) {
	named := mustNetwork(t, `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/16","node_slice_size":"/24","network_name":"blue"}}`)
	unnamed := mustNetwork(t, `{"name":"c","ipam":{"type":"whereabouts","range":"fd00::/64","node_slice_size":"/80"}}`)
	cases := []struct {
		n     Network
		node  string
		slice string
		want  string
	}{
		{named, "worker-1", "10.0.3.0/24", "blue-worker-1-10.0.3.0-24"},
		{unnamed, "worker-1", "fd00::1:0:0:0/80", "worker-1-fd00--1-0-0-0-80"},
	}
	for _, c := range cases {
		got := c.n.PoolName(c.node, netip.MustParsePrefix(c.slice))
		if got != c.want {
			t.Errorf("PoolName = %s, want %s", got, c.want)
		}
		if node, ok := c.n.NodeOfPool(got, c.slice); !ok || node != c.node {
			t.Errorf("NodeOfPool(%s) = %s %v", got, node, ok)
		}
	}
	if _, ok := named.NodeOfPool("red-worker-1-10.0.3.0-24", "10.0.3.0/24"); ok {
		t.Error("a pool of another network was attributed")
	}
}
