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

package cni_test

import (
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestIPv6HexNodeSlices: IPv6, a node whose name is hex-like and holds "-": the
// whole-range NAD must still see the sliced pod's address once its reservation is deleted.
func TestIPv6HexNodeSlices(t *testing.T) {
	for _, tc := range []struct{ net, node, rng, slice string }{
		{"r46v6", "fd46-a", "fd46:46::/112", "fd46:46::/120"},
		{"r46v6b", "ab-cd--ef-1", "fd46:47::/112", "fd46:47::/120"},
	} {
		t.Run(tc.node, func(t *testing.T) {
			t.Setenv("NODENAME", tc.node)
			slicePool(t, tc.net, tc.rng, "/120", wbv1.NodeSliceAllocation{NodeName: tc.node, SliceRange: tc.slice})
			sliced := confOf(tc.net+"-a", tc.net, `"range":"`+tc.rng+`","node_slice_size":"/120"`)
			whole := confOf(tc.net+"-b", tc.net, `"range":"`+tc.rng+`"`)
			held := firstAddr(t, attachment{conf: sliced, container: "c-" + tc.net + "-p1", pod: tc.net + "-p1"})
			deleteReservation(t, tc.net, held)
			if got := firstAddr(t, attachment{conf: whole, container: "c-" + tc.net + "-q1", pod: tc.net + "-q1"}); got == held {
				t.Fatalf("whole-range ADD got %s, held by the sliced pod", got)
			}
		})
	}
}
