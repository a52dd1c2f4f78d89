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
	"math/rand/v2"
	"net/netip"
	"testing"
)

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "10.0.0.1-10.0.0.9", "10.0.0.0/24", "fd00::/64", "fd00::1-fd00::2",
		"10.0.0.9-10.0.0.1", "10.0.0.1-fd00::1", "::ffff:1.2.3.4", "fe80::1%eth0", " 1.2.3.4 - 1.2.3.5 ", "::/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			return
		}
		if r.First.Is4() != r.Last.Is4() || r.Last.Less(r.First) || r.First.Zone() != "" || r.First.Is4In6() {
			t.Fatalf("ParseRange(%q) = %v", s, r)
		}
		back, err := ParseRange(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseRange(%q) = %v, which reads back as %v, %v", s, r, back, err)
		}
		if !r.Contains(r.First) || !r.Contains(r.Last) {
			t.Fatalf("%v does not contain its ends", r)
		}
	})
}

// FuzzBuild feeds arbitrary one-entry specs to Build: it must never panic, and a pool it
// accepts must be consistent.
func FuzzBuild(f *testing.F) {
	f.Add("192.168.0.10", "192.168.0.20", "192.168.0.0/24", 24, "192.168.0.1", "192.168.0.15", false)
	f.Add("", "", "fd00::/64", 0, "fd00::1", "fd00::/120", false)
	f.Add("", "", "10.0.0.0/31", 0, "", "", true)
	f.Add("::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "", 0, "", "", false)
	f.Add("10.0.0.1", "fd00::1", "", 0, "", "", false)
	f.Add("10.0.0.255", "", "10.0.0.0/24", 33, "fd00::1", "10.0.0.9-10.0.0.1", false)
	f.Fuzz(func(t *testing.T, start, end, subnet string, prefix int, gateway, excluded string, reserved bool) {
		spec := Spec{Pools: []EntrySpec{{Start: start, End: end, Subnet: subnet, Prefix: prefix, Gateway: gateway}}, AllocateReserved: reserved}
		if excluded != "" {
			spec.ExcludedAddresses = []string{excluded}
		}
		p, err := Build(spec, WithRand(rand.New(rand.NewPCG(1, 1))))
		if err != nil {
			var fe FieldErrors
			if !errors.As(err, &fe) {
				t.Fatalf("Build() error %T is not FieldErrors: %v", err, err)
			}
			return
		}
		c := p.Counts()
		if !c.Used.IsZero() || c.Free.Cmp(c.Total) != 0 {
			t.Fatalf("fresh pool counts %v", c)
		}
		var first netip.Addr
		for r := range p.Ranges() {
			if !first.IsValid() {
				first = r.First
			}
			if !p.Contains(r.First) || !p.Contains(r.Last) {
				t.Fatalf("Ranges() yields %v, which the pool does not contain", r)
			}
			if pa, ok := p.Params(r.First); !ok || pa.Entry != 0 {
				t.Fatalf("Params(%s) = %v, %v", r.First, pa, ok)
			}
		}
		if g, err := ParseAddr(gateway); err == nil && p.Contains(g) {
			t.Fatalf("gateway %s is allocatable", g)
		}
		a, err := p.Allocate(Sequential)
		if c.Total.IsZero() != (err != nil) || (err == nil && a != first) {
			t.Fatalf("Allocate(Sequential) = %s, %v; first is %s", a, err, first)
		}
		if err == nil {
			if b, err := p.Allocate(Random); err == nil && (!p.InUse(b) || b == a) {
				t.Fatalf("Allocate(Random) = %s", b)
			}
		}
	})
}

// FuzzOperations runs an operation sequence on a random small pool against the model.
// Each pair of bytes is one operation: the first picks it, the second the address.
func FuzzOperations(f *testing.F) {
	f.Add(uint64(1), []byte{0, 3, 2, 0, 3, 0, 5, 0, 1, 3, 4, 3})
	f.Add(uint64(7), []byte{2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 5, 0})
	f.Add(uint64(42), []byte{0, 0x81, 0, 0x82, 1, 0x81, 3, 0, 5, 0, 4, 0x82})
	f.Fuzz(func(t *testing.T, seed uint64, ops []byte) {
		r := rand.New(rand.NewPCG(seed, seed))
		c := randomConfig(r)
		p, err := NewPool(c, WithRand(r))
		if err != nil {
			return
		}
		m := newModel(c)
		for i := 0; i+1 < len(ops); i += 2 {
			b := ops[i+1]
			a := netip.AddrFrom4([4]byte{10, 0, 0, b % 70})
			if b&0x80 != 0 {
				a = netip.AddrFrom16([16]byte{0: 0xfd, 15: (b & 0x7f) % 70})
			}
			check(t, p, m, int(ops[i]), a)
		}
		check(t, p, m, 5, netip.Addr{})
	})
}
