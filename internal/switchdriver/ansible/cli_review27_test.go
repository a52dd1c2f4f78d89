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
	"testing"
	"time"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/fakeswitch"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// Review of issue 27: a VLAN that the switch refuses fails only the ports that carry it.
// Junos ELS ships with "vlans default vlan-id 1", and infra teams name their own VLAN
// objects; junos refuses a second object with the same vlan-id. One tenant whose port
// names such a VLAN made the whole push fail, and the per-port retry pushed every port
// with the VLANs of all ports of the run, so every other port of the run (other tenants'
// changes, cleanings) failed with it, run after run.
func TestCLIRefusedVLANFailsOnlyItsPort(t *testing.T) {
	f := newCLIFixtureOf(t, fakeswitch.Options{OS: "junos", User: "admin", Password: "s3cret{{ x }}", Ports: cliPorts["junos"]})
	if err := f.fake.Apply([]string{"set vlans default vlan-id 1"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ports := cliPorts["junos"]
	res := f.driver().Apply(ctx, []switchdriver.Change{
		{Port: ports[0], Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(1)}},
		{Port: ports[1], Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(60)}},
		{Port: ports[2], Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "70-71"}, Parking: 4000},
	})
	if res[ports[0]] == nil {
		t.Errorf("port %s: VLAN 1 clashes with the switch's own VLAN object, but the port reports success", ports[0])
	}
	for _, p := range ports[1:] {
		if res[p] != nil {
			t.Errorf("port %s failed with the port that named a refused VLAN: %v", p, res[p])
		}
	}
	if got := f.fake.PortState(ports[1]); got.Untagged != 60 {
		t.Errorf("port %s carries untagged %d, want 60", ports[1], got.Untagged)
	}
}
