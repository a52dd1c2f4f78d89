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
	"testing"
)

// benchAllocateAll allocates every address of a /16 (65,534) per iteration.
func benchAllocateAll(b *testing.B, s Strategy) {
	spec := Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/16"}}}
	for b.Loop() {
		p := mustBuild(b, spec, seeded(1))
		for range 65534 {
			if _, err := p.Allocate(s); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := p.Allocate(s); err == nil {
			b.Fatal("pool not full")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/65534, "ns/addr")
}

func BenchmarkAllocateAll16Sequential(b *testing.B) { benchAllocateAll(b, Sequential) }
func BenchmarkAllocateAll16Random(b *testing.B)     { benchAllocateAll(b, Random) }

// BenchmarkAllocateIPv6Slash64Random1M draws a million addresses from a /64, which leaves
// the free space in about a million pieces.
func BenchmarkAllocateIPv6Slash64Random1M(b *testing.B) {
	const n = 1_000_000
	spec := Spec{Pools: []EntrySpec{{Subnet: "fd00::/64"}}}
	for b.Loop() {
		p := mustBuild(b, spec, seeded(1))
		for range n {
			if _, err := p.Allocate(Random); err != nil {
				b.Fatal(err)
			}
		}
		if p.Counts().Used.Uint64() != n {
			b.Fatal("lost an address")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/addr")
}

// benchAllocateAt measures one Allocate (and the Release that keeps the fill level) on a
// /16 filled at random to percent, which fragments the free space as badly as it gets.
func benchAllocateAt(b *testing.B, percent int) {
	for _, s := range []Strategy{Random, Sequential} {
		b.Run(s.String(), func(b *testing.B) {
			p := mustBuild(b, Spec{Pools: []EntrySpec{{Subnet: "10.0.0.0/16"}}}, seeded(2))
			for range 65534 * percent / 100 {
				if _, err := p.Allocate(Random); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				a, err := p.Allocate(s)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Release(a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAllocateAt10Percent(b *testing.B) { benchAllocateAt(b, 10) }
func BenchmarkAllocateAt90Percent(b *testing.B) { benchAllocateAt(b, 90) }
