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
	"fmt"
	"net/netip"
	"testing"
)

func FuzzParseNetwork(f *testing.F) {
	f.Add(`{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.16-10.0.0.200/24","node_slice_size":"/28","exclude":["10.0.0.64/30"]}}`)
	f.Add(`{"name":"c","plugins":[{"ipam":{"type":"rackwire","range":"fd00::/64","node_slice_size":"80"}}]}`)
	f.Fuzz(func(t *testing.T, config string) {
		n, err := ParseNetwork([]byte(config))
		if err != nil {
			return
		}
		if _, err := NewAssigner(n); err != nil {
			t.Fatalf("a parsed network %+v has no assigner: %v", n, err)
		}
	})
}

// FuzzAssigner drives joins, leaves and holds on a small range and checks the invariants:
// no slice twice, every slice usable (bounds, exclusions), never one touching another node's
// hold, and a node waits only when no eligible slice is left.
func FuzzAssigner(f *testing.F) {
	f.Add(uint8(24), uint8(28), uint8(20), uint8(230), uint8(64), []byte{0, 1, 2, 3, 0x81, 4, 0x42, 5})
	f.Add(uint8(120), uint8(124), uint8(0), uint8(255), uint8(16), []byte{1, 2, 3, 0xc1, 4})
	f.Fuzz(func(t *testing.T, rangeBits, sliceBits, start, end, exclude uint8, ops []byte) {
		v6 := rangeBits > 32
		base := "10.0.0.0"
		if v6 {
			base, rangeBits = "fd00::", 120+rangeBits%8
		} else {
			rangeBits = 24 + rangeBits%8
		}
		addr := func(last uint8) string {
			if v6 {
				return fmt.Sprintf("fd00::%x", last)
			}
			return fmt.Sprintf("10.0.0.%d", last)
		}
		cfg := fmt.Sprintf(`{"name":"c","ipam":{"type":"whereabouts","range":"%s/%d","range_start":"%s","range_end":"%s","exclude":["%s/%d"],"node_slice_size":"/%d"}}`,
			base, rangeBits, addr(start), addr(end), addr(exclude), map[bool]int{true: 126, false: 30}[v6], int(rangeBits)+int(sliceBits%6))
		n, err := ParseNetwork([]byte(cfg))
		if err != nil {
			return
		}
		a, err := NewAssigner(n)
		if err != nil {
			t.Fatal(err)
		}
		var holds []Hold
		for _, op := range ops {
			node := fmt.Sprintf("n%d", op&0x0f)
			switch op >> 6 {
			case 0, 1:
				a.Assign(node)
			case 2:
				a.Release(node)
			case 3:
				if s, ok := a.Lookup(node); ok {
					a.Release(node)
					holds = append(holds, Hold{Prefix: s, Node: node})
					a.SetHolds(holds)
				}
			}
		}
		seen := map[netip.Prefix]string{}
		for node, i := range a.byNode {
			s := a.grid.Slice(i)
			if other, dup := seen[s]; dup {
				t.Fatalf("%s given to %s and %s", s, node, other)
			}
			seen[s] = node
			if !a.usable(i) || (n.Start.IsValid() && s.Addr().Less(n.Start)) || (n.End.IsValid() && n.End.Less(lastAddr(s))) {
				t.Fatalf("%s given to %s is outside the bounds or excluded", s, node)
			}
			for _, x := range n.Exclude {
				if x.Overlaps(s) {
					t.Fatalf("%s given to %s overlaps excluded %s", s, node, x)
				}
			}
			for _, h := range holds {
				if h.Prefix.Overlaps(s) && h.Node != node {
					t.Fatalf("%s given to %s overlaps %s's held %s", s, node, h.Node, h.Prefix)
				}
			}
		}
		if _, ok := a.Assign("waiting"); !ok {
			for i := range a.grid.Count() {
				if a.eligible(i, "waiting") {
					t.Fatalf("a node waits while slice %s is eligible", a.grid.Slice(i))
				}
			}
		}
	})
}
