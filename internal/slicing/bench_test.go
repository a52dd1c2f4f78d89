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
	"testing"
)

// BenchmarkAssign5000: 5,000 nodes joining one network of 8,192 slices; the cost of a join
// must not grow with the nodes already holding slices.
func BenchmarkAssign(b *testing.B) {
	for _, nodes := range []int{1000, 5000} {
		b.Run(fmt.Sprint(nodes), func(b *testing.B) {
			n := mustNetwork(b, `{"name":"c","ipam":{"type":"whereabouts","range":"10.0.0.0/16","exclude":["10.0.0.0/30"],"node_slice_size":"/29"}}`)
			names := make([]string, nodes)
			for i := range names {
				names[i] = fmt.Sprintf("node-%05d", i)
			}
			b.ResetTimer()
			for range b.N {
				a, _ := NewAssigner(n)
				for _, name := range names {
					if _, ok := a.Assign(name); !ok {
						b.Fatal("full")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes), "ns/node")
		})
	}
}

func BenchmarkListingIPv6(b *testing.B) {
	n := mustNetwork(b, `{"name":"c","ipam":{"type":"whereabouts","range":"fd00::/64","node_slice_size":"/80"}}`)
	a, _ := NewAssigner(n)
	for i := range 5000 {
		a.Assign(fmt.Sprint(i))
	}
	b.ResetTimer()
	for range b.N {
		_ = a.Listing(8192)
	}
}
