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
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"sigs.k8s.io/yaml"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/fakeswitch"
	"github.com/rackwire/rackwire/internal/switchdriver"
	"github.com/rackwire/rackwire/playbooks"
)

// network-runner is the reference for what each OS is sent. For the OSes whose providers
// drive a network_cli session (eos and nxos read the device's JSON first, which the fake
// switch answers from its model) or run NCLU (cumulus, whose fake switch runs the nclu
// module's Python with a shell), the same port intents go
// through network-runner's own role, port by port, to one fake switch, and through
// rackwire's batched push to another; what every port then carries must be the same, but
// where testdata/networkrunner/differences.yaml lists the difference with its reason.
// openvswitch, whose provider runs openvswitch_db on the switch, is compared on the lab's real
// Open vSwitch instead (TestNRCompareOpenVSwitch).
var networkRunnerOSes = []string{"junos", "enos", "dellemc.os9.os9", "dellos10", "eos", "nxos", "cumulus"}

type difference struct {
	OS     string `json:"os"`
	Port   string `json:"port"`
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// nrIntent is one port's intent of the comparison: its untagged VLAN (0 for none) and the
// VLANs it carries tagged.
type nrIntent struct {
	name     string
	untagged int
	trunked  []int
}

var nrIntents = []nrIntent{
	{"access", 60, nil},
	{"trunk", 5, []int{100, 101}},
	{"tagged-only", 0, []int{61, 62}},
}

// nrParking is the Switch's parking VLAN in rackwire's push.
const nrParking = 4000

// nrReference reads differences.yaml and makes the playbooks of the reference runs:
// rackwire's with role.yaml beside them.
func nrReference(t *testing.T) ([]difference, fstest.MapFS) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "networkrunner", "differences.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []difference
	if err := yaml.Unmarshal(raw, &listed); err != nil {
		t.Fatal(err)
	}
	role, err := os.ReadFile(filepath.Join("testdata", "networkrunner", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	withRole := fstest.MapFS{"networkrunner.yaml": {Data: role}}
	if err := fs.WalkDir(playbooks.FS, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(playbooks.FS, p)
		withRole[p] = &fstest.MapFile{Data: b}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return listed, withRole
}

// nrRoleVars are role.yaml's variables for the intents on ports (one port per intent).
func nrRoleVars(ports []string) map[string]any {
	var nrPorts []map[string]any
	for i, in := range nrIntents {
		untagged := in.untagged
		if untagged == 0 {
			untagged = 1 // the role's default vlan_id
		}
		nrPorts = append(nrPorts, map[string]any{"port": ports[i], "untagged": untagged, "trunked": nonNilInts(in.trunked)})
	}
	return map[string]any{"nr_vlans": []int{1, 5, 60, 61, 62, 100, 101}, "nr_ports": nrPorts}
}

// nrChanges are rackwire's changes for the intents on ports (one port per intent).
func nrChanges(ports []string) []switchdriver.Change {
	var changes []switchdriver.Change
	for i, in := range nrIntents {
		cfg := &networkv1alpha1.SwitchPortConfigurationSpec{}
		if in.untagged != 0 {
			cfg.UntaggedVLAN = vid(in.untagged)
		}
		for _, v := range in.trunked {
			if cfg.VLANs != "" {
				cfg.VLANs += ","
			}
			cfg.VLANs += networkv1alpha1.VLANRange(fmt.Sprint(v))
		}
		changes = append(changes, switchdriver.Change{Port: ports[i], Config: cfg, Parking: nrParking})
	}
	return changes
}

// comparePort fails the test where network-runner's role (theirs) and rackwire (ours) leave a
// port differently in one of fields (untagged, tagged, down, bridged) and differences.yaml
// does not list it for the OS and the port's label, and where it lists a difference that
// is gone.
func comparePort(t *testing.T, listed []difference, os, label, port string, theirs, ours fakeswitch.PortView, fields ...string) {
	t.Helper()
	for _, field := range fields {
		var same bool
		switch field {
		case "untagged":
			same = theirs.Untagged == ours.Untagged
		case "tagged":
			same = slices.Equal(theirs.Tagged, ours.Tagged)
		case "down":
			same = theirs.Down == ours.Down
		case "bridged":
			same = theirs.Bridged == ours.Bridged
		default:
			t.Fatalf("no field %q to compare", field)
		}
		listedHere := slices.ContainsFunc(listed, func(l difference) bool { return l.OS == os && l.Port == label && l.Field == field })
		switch {
		case !same && !listedHere:
			t.Errorf("port %s (%s): network-runner leaves %+v, rackwire %+v; the difference in %s is not listed in differences.yaml", port, label, theirs, ours, field)
		case same && listedHere:
			t.Errorf("port %s (%s): differences.yaml lists a difference in %s that is gone (both %+v)", port, label, field, ours)
		}
	}
}

func TestNRCompare(t *testing.T) {
	listed, withRole := nrReference(t)
	for _, os := range networkRunnerOSes {
		t.Run(os, func(t *testing.T) {
			t.Parallel()
			ports := cliPorts[os]
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()

			// network-runner's role, per port.
			ref := nrFixture(t, os)
			d, err := Factory(Config{WorkDir: ref.work, ConnectTimeout: 10 * time.Second, Playbooks: withRole})(ref.asw, ref.secret)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.(*Driver).run(ctx, "networkrunner.yaml", len(nrIntents), nrRoleVars(ports)); err != nil {
				t.Fatalf("network-runner's role: %v", err)
			}

			// rackwire's batched push.
			own := nrFixture(t, os)
			for p, err := range own.driver().Apply(ctx, nrChanges(ports)) {
				if err != nil {
					t.Fatalf("rackwire: port %s: %v", p, err)
				}
			}

			for i, in := range nrIntents {
				comparePort(t, listed, os, in.name, ports[i], ref.fake.PortState(ports[i]), own.fake.PortState(ports[i]), "untagged", "tagged", "down")
			}
			compareBystander(t, os, ref.fake, own.fake, listed)
			// A difference is explained from the lines each side sent.
			if t.Failed() {
				t.Logf("network-runner's role sent:\n%s", strings.Join(ref.fake.Commands(), "\n"))
				t.Logf("rackwire sent:\n%s", strings.Join(own.fake.Commands(), "\n"))
			}
		})
	}
}

// enableOf is the enable secret of the OS's fake switch. The role's ENOS tasks send "enable"
// as a command and cannot answer a secret, so that login lands privileged.
func enableOf(os string) string {
	if os == "dellemc.os9.os9" {
		return "en4ble"
	}
	return ""
}

func nonNilInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}
