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
	"fmt"
	"net/netip"
	"testing"

	"github.com/rackwire/rackwire/internal/cniconf"
)

// TestPicksFromOneView: picks share one pool per view; none may hand out an address the
// view holds, another claim's pick, or (after the view changes) an address picked from the
// earlier view, and an address given back (a refused create) is picked again.
func TestPicksFromOneView(t *testing.T) {
	n, err := cniconf.Parse([]byte(`{"cniVersion":"1.0.0","name":"p","type":"bridge","allowPersistentIPs":true,` +
		`"ipam":{"type":"rackwire","range":"10.9.0.0/24","gateway":"10.9.0.1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	sc := newPicks().scope("")
	v1 := &heldView{held: []netip.Addr{netip.MustParseAddr("10.9.0.2"), netip.MustParseAddr("10.9.0.4")}}
	got := map[netip.Addr]string{}
	take := func(v *heldView, claim string) netip.Addr {
		t.Helper()
		a, err := pick(sc, n, 0, claim, seen{held: v.held, view: v})
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := got[a]; ok && other != claim {
			t.Fatalf("%s picked %s, already %s's", claim, a, other)
		}
		got[a] = claim
		return a
	}
	for i := range 3 {
		take(v1, fmt.Sprintf("ns/c%d", i))
	}
	for _, held := range v1.held {
		if c, ok := got[held]; ok {
			t.Errorf("%s picked %s, which the view holds", c, held)
		}
	}
	if a := take(v1, "ns/c1"); got[a] != "ns/c1" {
		t.Errorf("c1's second pick %s is not its first", a)
	}
	// A new view that does not show the picks yet (their reservations are not cached).
	v2 := &heldView{held: v1.held}
	a3 := take(v2, "ns/c3")
	sc.unmark(a3)
	delete(got, a3)
	if a := take(v2, "ns/c4"); a != a3 {
		t.Errorf("after %s was given back, c4 got %s", a3, a)
	}
}
