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
	"slices"
	"strings"
	"testing"
)

func TestRangesInPoolName(t *testing.T) {
	cases := []struct {
		tail string
		want []string
	}{
		{"10.0.0.0-24", []string{"10.0.0.0/24"}},
		{"node-1-10.0.0.0-26", []string{"10.0.0.0/26"}},
		{"worker-a.example-10.8.0.64-26", []string{"10.8.0.64/26"}},
		{"fd00---64", []string{"fd00::/64"}},
		{"n1-fd00-1---80", []string{"fd00:1::/80", "1::/80"}},
		// A node named like hex reads as part of the range too: both readings count.
		{"ab-fd00---64", []string{"ab:fd00::/64", "fd00::/64"}},
		{"2001-db8--0-0-1-0-0-0-128", nil}, // not the form whereabouts writes
		{"pool", nil},
		{"10.0.0.0", nil},
		{"10.0.0.0-33", nil},
		{"-24", nil},
		{"", nil},
	}
	for _, c := range cases {
		var got []string
		for _, p := range RangesInPoolName(c.tail) {
			got = append(got, p.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("RangesInPoolName(%q) = %v, want %v", c.tail, got, c.want)
		}
	}
}

// FuzzRangesInPoolName: every pool name whereabouts makes for a range, with or without a
// node, yields that range among its readings.
func FuzzRangesInPoolName(f *testing.F) {
	f.Add("node-1", "10.0.0.0/24")
	f.Add("ab", "fd00::/64")
	f.Add("", "2001:db8::1/128")
	f.Fuzz(func(t *testing.T, node, rng string) {
		p, err := netip.ParsePrefix(rng)
		if err != nil || p.Addr().Zone() != "" || strings.ContainsAny(node, ":/") {
			return
		}
		p = p.Masked()
		name := PoolName("", node, p)
		if !slices.Contains(RangesInPoolName(name), p) {
			t.Fatalf("RangesInPoolName(%q) = %v, missing %s", name, RangesInPoolName(name), p)
		}
	})
}
