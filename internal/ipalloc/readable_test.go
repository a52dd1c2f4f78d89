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

import "testing"

func TestReadable(t *testing.T) {
	for _, tc := range []struct {
		c    Count
		want string
	}{
		{Count{}, "0"},
		{Count{u64(254)}, "254"},
		{Count{u64(9_999_999)}, "9999999"},
		{Count{u64(1<<24 - 2)}, "~2^24"},                // an IPv4 /8 less network and broadcast
		{Count{u64(12_345_678)}, "1.2e7"},               // no power of two near it
		{Count{uint128{hi: 1}}, "2^64"},                 // a whole /64
		{Count{uint128{hi: 0, lo: 1<<64 - 1}}, "~2^64"}, // a /64 less its gateway
		{Count{uint128{hi: 1 << 16}}, "2^80"},           // a /48
		{Count{maxUint128}, "~2^128"},
	} {
		if got := tc.c.Readable(); got != tc.want {
			t.Errorf("Readable(%s) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
