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
	"strconv"
	"testing"
	"time"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// Older versions named a junos VLAN object after a run's range ("rackwire-60-63" with a
// vlan-id-list). Objects are now one per id, so the first run that shapes one of those
// VLANs committed a second object with its id, and junos refused the commit, forever. Now a
// run replaces the range objects with objects per id in the same commit, and the ports that
// used them keep their VLANs.
func TestJunosLegacyRanges(t *testing.T) {
	f := newCLIFixture(t, "junos", "", "")
	ports := cliPorts["junos"]
	// What an older version left: a range object, and a trunk of its VLANs.
	if err := f.fake.Apply([]string{
		"set vlans rackwire-60-63 vlan-id-list 60-63",
		"set interfaces " + ports[0] + " unit 0 family ethernet-switching interface-mode trunk",
		"set interfaces " + ports[0] + " unit 0 family ethernet-switching vlan members [ 60-63 ]",
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res := f.driver().Apply(ctx, []switchdriver.Change{
		{Port: ports[1], Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(61)}},
	})
	if err := res[ports[1]]; err != nil {
		t.Fatalf("port %s: %v", ports[1], err)
	}
	if got := f.fake.PortState(ports[1]); got.Untagged != 61 {
		t.Errorf("port %s carries untagged %d, want 61", ports[1], got.Untagged)
	}
	if got := f.fake.PortState(ports[0]); !slices.Equal(got.Tagged, vlanIDs(60, 63)) {
		t.Errorf("port %s, configured by an older version, carries tagged %v, want 60-63", ports[0], got.Tagged)
	}
	objects := f.fake.JunosVLANs()
	if _, ok := objects["rackwire-60-63"]; ok {
		t.Errorf("the range object of an older version is still there: %v", objects)
	}
	for id := 60; id <= 63; id++ {
		if name := "rackwire-" + strconv.Itoa(id); !slices.Equal(objects[name], []int{id}) {
			t.Errorf("VLAN %d: object %s holds %v, want one object per id: %v", id, name, objects[name], objects)
		}
	}
}
