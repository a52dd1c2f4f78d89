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
		{"native-tagged carries the tag tagged", []int{5}, []int{20}, "native-tagged", 0, vlan.Of(5, 20)},
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
				`{"data":[[["set",[]],["set",[` + trunks + `]],"trunk",["map",[["rackwire-config",` + string(ext) + `]]]]],"headings":["tag","trunks","vlan_mode","external_ids"]}`,
				`{"data":[["up"]],"headings":["admin_state"]}`,
			},
			"flows": {"NXST_FLOW reply (xid=0x4):"},
		})
		return b
	}
	got, err := readOVS("p1", raw("20,21,22"))
	if err != nil {
		t.Fatal(err)
	}
	if got.VLANs != "20, 21-22" || got.UntaggedVLAN != nil || got.Disabled {
		t.Errorf("unchanged port read as %+v", got)
	}
	got, err = readOVS("p1", raw("20,21"))
	if err != nil {
		t.Fatal(err)
	}
	if got.VLANs != "20-21" {
		t.Errorf("a trunk removed by hand reads as %q", got.VLANs)
	}
	if _, err := readOVS("p1", json.RawMessage(`{"settings":["{}"]}`)); err == nil {
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
