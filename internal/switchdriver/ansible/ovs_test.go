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
	"encoding/json"
	"strings"
	"testing"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/vlan"
)

func TestVLANBehaviour(t *testing.T) {
	all, _ := vlan.RangeSet(vlan.MinID, vlan.MaxID)
	for _, tc := range []struct {
		name     string
		tags     []int
		trunks   []int
		mode     string
		untagged int
		carried  vlan.Set
	}{
		{"OVS default: a trunk of every VLAN", nil, nil, "", 0, all},
		{"access", []int{10}, nil, "access", 10, vlan.Set{}},
		{"access ignores trunks", []int{10}, []int{20}, "access", 10, vlan.Set{}},
		{"tag without mode is access", []int{10}, nil, "", 10, vlan.Set{}},
		{"native-untagged", []int{5}, []int{20, 21}, "native-untagged", 5, vlan.Of(20, 21)},
		{"native-tagged puts untagged frames in the tag and carries it tagged", []int{5}, []int{20}, "native-tagged", 5, vlan.Of(5, 20)},
		{"dot1q-tunnel carries the tag only, whatever its trunks", []int{5}, []int{20, 21}, "dot1q-tunnel", 5, vlan.Set{}},
		{"trunk ignores the tag", []int{5}, []int{20}, "trunk", 0, vlan.Of(20)},
		{"trunk without trunks carries every VLAN", nil, nil, "trunk", 0, all},
		{"trunks without mode", nil, []int{7}, "", 0, vlan.Of(7)},
		{"VLAN 0 and 4095 are not configurable", nil, []int{0, 7, 4095}, "trunk", 0, vlan.Of(7)},
	} {
		u, c := vlanBehaviour(tc.tags, tc.trunks, tc.mode)
		if u != tc.untagged || c != tc.carried {
			t.Errorf("%s: got %d %v, want %d %v", tc.name, u, c, tc.untagged, tc.carried)
		}
	}
}

func TestReadOVSKeepsTheRecordedForm(t *testing.T) {
	record, _ := json.Marshal(&networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "20, 21-22"})
	ext, _ := json.Marshal(string(record))
	raw := func(trunks string) json.RawMessage {
		b, _ := json.Marshal(map[string][]string{
			"settings": {
				`{"data":[["p1",["set",[]],["set",[` + trunks + `]],"trunk",["map",[["rackwire-config",` + string(ext) + `]]]],` +
					`["p2",["set",[]],["set",[]],["set",[]],["map",[]]]],"headings":["name","tag","trunks","vlan_mode","external_ids"]}`,
				`{"data":[["p1","up"],["p2","up"]],"headings":["name","admin_state"]}`,
			},
			"flows": {"NXST_FLOW reply (xid=0x4):"},
		})
		return b
	}
	got, err := readOVS(raw("20,21,22"), []string{"p1", "p2"})
	if err != nil {
		t.Fatal(err)
	}
	if p := got["p1"]; p.VLANs != "20, 21-22" || p.UntaggedVLAN != nil || p.Disabled {
		t.Errorf("unchanged port read as %+v", p)
	}
	if p := got["p2"]; p.VLANs != "1-4094" {
		t.Errorf("a port on OVS's default reads as %+v; it trunks every VLAN", p)
	}
	got, err = readOVS(raw("20,21"), []string{"p1"})
	if err != nil {
		t.Fatal(err)
	}
	if got["p1"].VLANs != "20-21" {
		t.Errorf("a trunk removed by hand reads as %q", got["p1"].VLANs)
	}
	if _, err := readOVS(raw("20"), []string{"p9"}); err == nil || !strings.Contains(err.Error(), "port p9") {
		t.Errorf("a port missing from the read: %v", err)
	}
	if _, err := readOVS(json.RawMessage(`{"settings":["{}"]}`), []string{"p1"}); err == nil {
		t.Error("a truncated read was accepted")
	}
}

func TestReportOf(t *testing.T) {
	ok := `{"plays":[{"tasks":[
		{"task":{"name":"x"},"hosts":{"switch":{"failed":true,"msg":"rescued failure"}}},
		{"task":{"name":"rackwire: report"},"hosts":{"switch":{"ansible_facts":{"rackwire_report":{"p1":{"ok":true}}}}}}]}]}`
	report, err := reportOf([]byte("[WARNING]: noise\n" + ok))
	if err != nil || string(report["p1"]) != `{"ok":true}` {
		t.Fatalf("report = %v, %v", report, err)
	}
	unreachable := `{"plays":[{"tasks":[{"task":{"name":"t"},"hosts":{"switch":{"unreachable":true,"msg":"Invalid/incorrect password: Permission denied"}}}]}]}`
	if _, err := reportOf([]byte(unreachable)); err == nil || err.Error() != "switch unreachable: Invalid/incorrect password: Permission denied" {
		t.Fatalf("unreachable: %v", err)
	}
}
