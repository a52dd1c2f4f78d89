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

package ipamclaim

import (
	"strings"
	"testing"
)

func TestClaimName(t *testing.T) {
	long := strings.Repeat("a", 250)
	cases := []struct{ vm, network, want string }{
		{"vm-a", "tenantred", "vm-a.tenantred"},
		{"VM-A", "TenantRed", "vm-a.tenantred"},
		{"vm.a", "net_1", "vm.a.net.1"},
		{"vm", "-red-", "vm.red"},
		{"vm", "a--b", "vm.a--b"},
		{"vm", "røde", "vm.r.de"},
		{long, "xy", long + ".xy"},
		{long, "xyz", long + ".xy"},
		{long + "aa", "b", long + "aa"}, // cut just after the dot: never ends in "."
	}
	for _, c := range cases {
		if got := ClaimName(c.vm, c.network); got != c.want {
			t.Errorf("ClaimName(%q, %q) = %q, want %q", c.vm, c.network, got, c.want)
		}
		if got := ClaimName(c.vm, c.network); len(got) > 253 {
			t.Errorf("ClaimName(%q, %q) has %d characters", c.vm, c.network, len(got))
		}
	}
}
