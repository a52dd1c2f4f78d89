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
	"fmt"
	"net/netip"
	"testing"
)

// fillRange ADDs pods through conf until the range is exhausted and returns the addresses taken.
func fillRange(t *testing.T, conf []byte, prefix string) []netip.Addr {
	t.Helper()
	var got []netip.Addr
	for i := 0; i < 16; i++ {
		id := fmt.Sprintf("%s-%d", prefix, i)
		res, _, err := attachment{conf: conf, container: "c-" + id, pod: id}.add()
		if err != nil {
			t.Logf("fill stopped after %d addresses: %v", len(got), err)
			break
		}
		p, _ := netip.ParsePrefix(addrs(res)[0])
		got = append(got, p.Addr())
	}
	if len(got) == 0 {
		t.Fatal("fill took nothing")
	}
	return got
}

// TestUnnamedNetworkReadsNamedPools: an unnamed network (network_name "", pools named
// by range only, reservations named by the bare address) is another address space than a
// named network on the same range: whereabouts keys both its reservations and pools apart.
// A named network filling the range must not exhaust the unnamed one.
func TestUnnamedNetworkReadsNamedPools(t *testing.T) {
	t.Setenv("NODENAME", "node-r46u")
	named := confOf("r46u-named", "r46u", `"range":"10.246.0.0/29"`)
	unnamed := confOf("r46u-unnamed", "", `"range":"10.246.0.0/29"`)
	taken := fillRange(t, named, "r46u-n")
	res, _, err := attachment{conf: unnamed, container: "c-r46u-x", pod: "r46u-x"}.add()
	if err != nil {
		t.Fatalf("named network r46u (pool r46u-10.246.0.0-29) took %v; the unnamed network on the same range "+
			"(its own pool 10.246.0.0-29, its own reservations) then fails its first ADD: %v", taken, err)
	}
	t.Logf("unnamed got %v", addrs(res))
}

// TestNetworkNamePrefix: a tenant's network "r46a-b" names its pool r46a-b-<range>,
// which network "r46a" reads as node "b"'s slice of its own. The tenant's pods then take the
// victim network's addresses: "r46a"'s ADD fails once "r46a-b" fills the range.
func TestNetworkNamePrefix(t *testing.T) {
	t.Setenv("NODENAME", "node-r46a")
	tenant := confOf("r46-tenant", "r46a-b", `"range":"10.246.1.0/29"`)
	victim := confOf("r46-victim", "r46a", `"range":"10.246.1.0/29"`)
	taken := fillRange(t, tenant, "r46a-t")
	res, _, err := attachment{conf: victim, container: "c-r46a-v", pod: "r46a-v"}.add()
	if err != nil {
		t.Fatalf("network r46a-b (pool r46a-b-10.246.1.0-29) took %v; network r46a, another address space "+
			"(reservations r46a-<ip>, pool r46a-10.246.1.0-29), then fails its ADD: %v", taken, err)
	}
	t.Logf("victim got %v", addrs(res))
}

// TestNetworkNamePrefixPartial: the same, with the victim's range partly used: every
// address the tenant network holds is withheld from the victim.
func TestNetworkNamePrefixPartial(t *testing.T) {
	t.Setenv("NODENAME", "node-r46p")
	tenant := confOf("r46p-tenant", "r46p-x", `"range":"10.246.2.0/24"`)
	victim := confOf("r46p-victim", "r46p", `"range":"10.246.2.0/24"`)
	held := firstAddr(t, attachment{conf: tenant, container: "c-r46p-t", pod: "r46p-t"})
	got := firstAddr(t, attachment{conf: victim, container: "c-r46p-v", pod: "r46p-v"})
	if got != held {
		t.Fatalf("network r46p's first ADD on an empty pool got %s, not the lowest address %s, which only network r46p-x holds", got, held)
	}
}
