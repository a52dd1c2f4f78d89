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
	"net/netip"
	"testing"

	"github.com/rackwire/rackwire/internal/cniconf"
)

// TestPicksOfTwoPoolsOfOneView: two NADs of one config name and network_name (in two
// namespaces) share a view and a reservation scope, and disagree on the gateway, so their
// picks come from two pools of that view. A pick from one pool may not be handed out again
// from the other: every pick is the scope's, whichever pool it came from.
func TestPicksOfTwoPoolsOfOneView(t *testing.T) {
	parse := func(gw string) cniconf.Network {
		n, err := cniconf.Parse([]byte(`{"cniVersion":"1.0.0","name":"shared","type":"bridge","allowPersistentIPs":true,` +
			`"ipam":{"type":"rackwire","network_name":"shared","range":"10.9.1.0/24","gateway":"` + gw + `"}}`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, b := parse("10.9.1.254"), parse("10.9.1.1")
	sc := newPicks().scope("shared")
	v := &heldView{}
	got := map[netip.Addr]string{}
	take := func(n cniconf.Network, claim string) {
		t.Helper()
		addr, err := pick(sc, n, 0, claim, seen{view: v})
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := got[addr]; ok {
			t.Fatalf("%s picked %s, already %s's", claim, addr, other)
		}
		got[addr] = claim
	}
	take(a, "ns-a/x") // builds a's pool
	take(b, "ns-b/y") // builds b's pool, with x's pick in it
	take(a, "ns-a/z") // a's pool knows nothing of y's pick
}
