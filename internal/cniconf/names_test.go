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
	"testing"
)

func TestReservationNames(t *testing.T) {
	cases := []struct {
		network, addr, name string
	}{
		{"", "10.10.0.5", "10.10.0.5"},
		{"", "fd00::5", "fd00--5"},
		{"", "fd00::", "fd00--0"},
		{"", "2001:db8:0:1::", "2001-db8-0-1--0"},
		{"blue", "10.10.0.5", "blue-10.10.0.5"},
		{"blue", "fd00::5", "blue-fd00--5"},
		{"", "::ffff:10.0.0.1", "10.0.0.1"},
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		if got := ReservationName(c.network, a); got != c.name {
			t.Errorf("ReservationName(%q, %s) = %q, want %q", c.network, a, got, c.name)
		}
		back, ok := ReservedAddress(c.network, c.name)
		if !ok || back != a.Unmap() {
			t.Errorf("ReservedAddress(%q, %q) = %s, %v; want %s", c.network, c.name, back, ok, a.Unmap())
		}
	}
	for _, c := range []struct{ network, name string }{
		{"", "blue-10.10.0.5"}, // a named network's, not an unnamed one's
		{"blue", "10.10.0.5"},  // an unnamed network's
		{"blue", "red-10.0.0.1"},
		{"", "fd00-0-0-0-0-0-0-5"}, // not the form whereabouts writes
		{"", "pool-a"},
	} {
		if a, ok := ReservedAddress(c.network, c.name); ok {
			t.Errorf("ReservedAddress(%q, %q) = %s, want none", c.network, c.name, a)
		}
	}
}
