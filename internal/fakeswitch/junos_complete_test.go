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

package fakeswitch

import (
	"slices"
	"testing"
)

// network-runner's junos trunk sends "native-vlan <id>". The Junos CLI completes a word
// typed short on the space that follows it, so the switch takes it as native-vlan-id: the
// trunk carries its native VLAN untagged, not tagged.
func TestJunosCompletesNativeVLANTypedShort(t *testing.T) {
	s := startOS(t, "junos", "ge-0/0/1")
	c := newCLI(s)
	for _, cmd := range []string{
		"configure",
		"set vlans v5 vlan-id 5", "set vlans v100 vlan-id 100",
		"set interfaces ge-0/0/1 unit 0 family ethernet-switching interface-mode trunk",
		"set interfaces ge-0/0/1 native-vlan 5",
		"set interfaces ge-0/0/1 unit 0 family ethernet-switching vlan members [5 100]",
		"commit",
	} {
		c.run(cmd)
	}
	if got := s.PortState("ge-0/0/1"); got.Untagged != 5 || !slices.Equal(got.Tagged, []int{100}) {
		t.Errorf("the trunk carries untagged %d, tagged %v; want 5 untagged and 100 tagged", got.Untagged, got.Tagged)
	}
}
