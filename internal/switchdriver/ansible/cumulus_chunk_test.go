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
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/fakeswitch"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// The Cumulus push went as one command line: 160 trunks of 250 VLANs each render about
// 180 KB, past Linux's 128 KiB limit on one argument, so the push was refused as a whole and
// every port was pushed alone: 160 commits for one run. Now the push goes in command lines of
// at most 64 commands, one NCLU change committed once, and every port carries its VLANs.
func TestCumulusChunks(t *testing.T) {
	var ports []string
	for i := 1; i <= 160; i++ {
		ports = append(ports, fmt.Sprintf("swp%d", i))
	}
	f := newCLIFixtureOf(t, fakeswitch.Options{OS: "cumulus", User: "admin", Password: "s3cret{{ x }}", Ports: ports})
	var even []string
	var want []int
	for id := 2; id <= 500; id += 2 {
		even = append(even, fmt.Sprint(id))
		want = append(want, id)
	}
	vlans := networkv1alpha1.VLANRange(strings.Join(even, ","))
	var changes []switchdriver.Change
	for _, p := range ports {
		changes = append(changes, switchdriver.Change{Port: p, Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: vlans}, Parking: 4000})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res := f.driver().Apply(ctx, changes)
	for _, p := range ports {
		if res[p] != nil {
			t.Fatalf("port %s: %v", p, res[p])
		}
		got := f.fake.PortState(p)
		if !slices.Equal(got.Tagged, want) || got.Untagged != 4000 || !got.Bridged {
			t.Errorf("port %s carries untagged %d, %d tagged VLANs, bridged %v; want the parking VLAN, the 250 even VLANs up to 500, bridged",
				p, got.Untagged, len(got.Tagged), got.Bridged)
		}
	}
	commits := 0
	for _, c := range f.fake.Commands() {
		if c == "net commit" {
			commits++
		}
	}
	if commits != 1 {
		t.Errorf("the push committed %d times, want once", commits)
	}
}
