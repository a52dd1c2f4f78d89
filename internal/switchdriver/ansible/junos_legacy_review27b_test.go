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

package ansible

import (
	"context"
	"slices"
	"testing"
	"time"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// A junos object named like an older version's range object ("rackwire-100-110") whose
// vlan-id-list is not what its name says (the infra team made it, or edited it: 100-105).
// The replacement read the ids from the name, so each run created objects for VLANs 106-110
// that were never there; one of them (108) is the infra team's own object "storage", so
// junos refused every commit, and every port of the switch failed, forever. The objects per
// id must hold exactly the ids the range object held.
func TestJunosLegacyRangeReplacedByTheIdsItHolds(t *testing.T) {
	f := newCLIFixture(t, "junos", "", "")
	ports := cliPorts["junos"]
	if err := f.fake.Apply([]string{
		"set vlans rackwire-100-110 vlan-id-list 100-105",
		"set vlans storage vlan-id 108",
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res := f.driver().Apply(ctx, []switchdriver.Change{
		{Port: ports[0], Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(101)}},
	})
	if err := res[ports[0]]; err != nil {
		t.Fatalf("port %s: %v", ports[0], err)
	}
	objects := f.fake.JunosVLANs()
	if !slices.Equal(objects["storage"], []int{108}) {
		t.Errorf("the infra team's object storage holds %v, want [108]: %v", objects["storage"], objects)
	}
	for id := 106; id <= 110; id++ {
		for name, ids := range objects {
			if name != "storage" && slices.Contains(ids, id) {
				t.Errorf("VLAN %d, never on the switch, is now object %s", id, name)
			}
		}
	}
	if got := f.fake.PortState(ports[0]); got.Untagged != 101 {
		t.Errorf("port %s carries untagged %d, want 101", ports[0], got.Untagged)
	}
}
