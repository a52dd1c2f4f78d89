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
	"strings"
	"testing"
	"time"

	"github.com/rackwire/rackwire/internal/fakeswitch"
	"github.com/rackwire/rackwire/internal/vlan"
)

// The lab's ports of TestNRCompareOpenVSwitch, one per intent of nrIntents on each side; no
// other test of the package touches them.
var (
	nrOVSTheirs = []string{"p12", "p13", "p14"}
	nrOVSOurs   = []string{"p15", "p16", "p17"}
)

// TestNRCompareOpenVSwitch is TestNRCompare for openvswitch, on the lab's real Open vSwitch:
// network-runner's own provider (openvswitch_db on the switch) configures one set of the
// lab's ports, rackwire's batched script another, and what OVS then holds for each port is
// compared as what it carries.
func TestNRCompareOpenVSwitch(t *testing.T) {
	listed, withRole := nrReference(t)
	// The role takes a provider's tasks from the playbook's directory first, where rackwire
	// keeps its own openvswitch tasks: the reference run must get network-runner's.
	for p := range withRole {
		if strings.HasPrefix(p, "providers/openvswitch/") {
			delete(withRole, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	ref := newFixture(t)
	d, err := Factory(Config{WorkDir: ref.work, ConnectTimeout: 10 * time.Second, Playbooks: withRole})(ref.asw, ref.secret)
	if err != nil {
		t.Fatal(err)
	}
	own := newFixture(t).build()
	// Two rounds: the intents on fresh ports, then every port takes the intent of the port
	// before it (access after tagged-only, trunk after access, tagged-only after trunk), as a
	// port does for its next tenant, so that what each side leaves of the earlier intent shows.
	rotate := func(ports []string) []string { return []string{ports[2], ports[0], ports[1]} }
	for round, label := range []func(i int) string{
		func(i int) string { return nrIntents[i].name },
		func(i int) string { return nrIntents[i].name + " after " + nrIntents[(i+2)%len(nrIntents)].name },
	} {
		theirs, ours := nrOVSTheirs, nrOVSOurs
		if round == 1 {
			theirs, ours = rotate(theirs), rotate(ours)
		}
		vars := nrRoleVars(theirs)
		// network-runner's openvswitch tasks become root (sudo) to run ovs-vsctl. The lab's
		// login owns the switch's database, as a switch's admin account does, and has no
		// sudo (which would also drop the OVS_RUNDIR that points ovs-vsctl at the lab): the
		// tasks run as the login, with nothing else changed.
		vars["ansible_become"] = false
		if _, err := d.(*Driver).run(ctx, "networkrunner.yaml", len(nrIntents), vars); err != nil {
			t.Fatalf("network-runner's role: %v", err)
		}
		for p, err := range own.Apply(ctx, nrChanges(ours)) {
			if err != nil {
				t.Fatalf("rackwire: port %s: %v", p, err)
			}
		}
		for i := range nrIntents {
			comparePort(t, listed, "openvswitch", label(i), theirs[i]+"/"+ours[i], ovsPortView(t, theirs[i]), ovsPortView(t, ours[i]), "untagged", "tagged", "down")
		}
		// A difference is explained from what each side left in OVS.
		if t.Failed() {
			for _, p := range append(slices.Clone(theirs), ours...) {
				row, _ := lab.Vsctl("--columns=name,tag,trunks,vlan_mode", "list", "Port", p)
				t.Logf("round %d, %s:\n%s", round+1, p, row)
			}
			return
		}
	}
}

// ovsPortView reads a lab port as what it carries, by the VLAN rules of
// ovs-vswitchd.conf.db(5) that vlanBehaviour (ovs.go, which Read uses) implements: with no
// vlan_mode, a port with a tag is an access port and one without a trunk; an access port
// carries its tag untagged and nothing tagged; a trunk carries its trunks tagged, every VLAN
// when trunks is empty; a native-untagged port carries its tag (the native VLAN) untagged
// besides. A trunk's untagged frames join VLAN 0, which no configuration names: Untagged 0
// stands for it as for dropped frames (a trunk of every VLAN differs in Tagged anyway).
// Down is the interface's admin_state.
func ovsPortView(t *testing.T, port string) fakeswitch.PortView {
	t.Helper()
	out, err := lab.Vsctl("--format=json", "--columns=name,tag,trunks,vlan_mode", "list", "Port", port)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ovsRows(out)
	if err != nil || rows[port] == nil {
		t.Fatalf("ovs-vsctl list Port %s printed %q: %v", port, out, err)
	}
	row := rows[port]
	untagged, carried := vlanBehaviour(ovsInts(row["tag"]), ovsInts(row["trunks"]), ovsString(row["vlan_mode"]))
	v := fakeswitch.PortView{Untagged: untagged, Down: get(t, "Interface", port, "admin_state") == "down", Bridged: true}
	if all, _ := vlan.RangeSet(vlan.MinID, vlan.MaxID); carried == all {
		v.Tagged = []int{-1} // every VLAN, as fakeswitch.PortView writes it
		return v
	}
	carried.Remove(untagged)
	v.Tagged = slices.Collect(carried.All())
	return v
}
