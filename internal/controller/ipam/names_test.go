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

package ipam

import (
	"net/netip"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestAddressName(t *testing.T) {
	for _, tc := range []struct {
		prefix, addr, want string
	}{
		{"provisioning", "192.168.0.11", "provisioning-192-168-0-11"},
		{"pool", "::ffff:10.0.0.1", "pool-10-0-0-1"},
		{"v6", "fd00:0:0:1::2", "v6-fd00-0-0-1--2"},
		{"v6", "FD00::A", "v6-fd00--a"},
		{"v6", "fd00:1::", "v6-fd00-1"},
		{"v6", "::1", "v6---1"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			got := AddressName(tc.prefix, netip.MustParseAddr(tc.addr))
			if got != tc.want {
				t.Fatalf("AddressName(%q, %s) = %q, want %q", tc.prefix, tc.addr, got, tc.want)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Fatalf("%q is not a valid object name: %v", got, errs)
			}
		})
	}
}

func BenchmarkAddressName(b *testing.B) {
	for _, a := range []string{"192.168.0.11", "fd00:0:0:1::abcd"} {
		addr := netip.MustParseAddr(a)
		b.Run(a, func(b *testing.B) {
			for b.Loop() {
				_ = AddressName("provisioning", addr)
			}
		})
	}
}
