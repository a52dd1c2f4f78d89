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
	"errors"
	"fmt"
	"strings"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/openflow"
	"github.com/rackwire/rackwire/internal/vlan"
)

// readers turn the read_ports result of a switch into the configuration each asked-for port
// holds, per OS.
var readers = map[string]func(raw json.RawMessage, ports []string) (map[string]*networkv1alpha1.SwitchPortConfigurationSpec, error){
	"openvswitch": readOVS,
}

// readOVS rebuilds the configuration of Open vSwitch ports from what each port does: its
// VLAN settings as OVS applies them, its admin state and its OpenFlow rules, all from one
// read of the switch. The record that apply leaves in external_ids supplies the forms the
// switch cannot hold (the text of a VLAN list, the access rules) wherever the port still
// behaves as the record says; where it does not, the result differs from the record and
// the operator sees drift.
func readOVS(raw json.RawMessage, ports []string) (map[string]*networkv1alpha1.SwitchPortConfigurationSpec, error) {
	var in struct {
		Settings []string `json:"settings"`
		Flows    []string `json:"flows"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	if len(in.Settings) != 2 {
		return nil, fmt.Errorf("expected the Port and Interface tables, got %d lines", len(in.Settings))
	}
	rows, err := ovsRows(in.Settings[0])
	if err != nil {
		return nil, fmt.Errorf("the Port table: %w", err)
	}
	ifaces, err := ovsRows(in.Settings[1])
	if err != nil {
		return nil, fmt.Errorf("the Interface table: %w", err)
	}
	out := make(map[string]*networkv1alpha1.SwitchPortConfigurationSpec, len(ports))
	for _, p := range ports {
		row, ok := rows[p]
		iface, ok2 := ifaces[p]
		if !ok || !ok2 {
			return nil, fmt.Errorf("port %s: no such port on the switch", p)
		}
		spec, err := ovsPortSpec(p, row, iface, in.Flows)
		if err != nil {
			return nil, fmt.Errorf("port %s: %w", p, err)
		}
		out[p] = spec
	}
	return out, nil
}

func ovsPortSpec(port string, row, iface map[string]any, flows []string) (*networkv1alpha1.SwitchPortConfigurationSpec, error) {
	tags, trunks := ovsInts(row["tag"]), ovsInts(row["trunks"])
	mode := ovsString(row["vlan_mode"])
	var record *networkv1alpha1.SwitchPortConfigurationSpec
	if r, ok := ovsMap(row["external_ids"])["rackwire-config"]; ok {
		record = &networkv1alpha1.SwitchPortConfigurationSpec{}
		if err := json.Unmarshal([]byte(r), record); err != nil {
			return nil, fmt.Errorf("external_ids:rackwire-config: %w", err)
		}
	}

	got := &networkv1alpha1.SwitchPortConfigurationSpec{Disabled: ovsString(iface["admin_state"]) == "down"}
	untagged, carried := vlanBehaviour(tags, trunks, mode)
	if untagged != 0 {
		id := networkv1alpha1.VLANID(untagged)
		got.UntaggedVLAN = &id
	}
	got.VLANs = networkv1alpha1.VLANRange(carried.String())
	if record != nil {
		if want, err := vlan.Parse(string(record.VLANs)); err == nil && want == carried {
			got.VLANs = record.VLANs
		}
		if sameFlows(port, record.ACL, flows) {
			got.ACL = record.ACL
		}
	}
	return got, nil
}

// vlanBehaviour is what an OVS port does with VLANs: the VLAN its untagged frames join and
// the VLANs it carries tagged. A port with no tag, trunks or mode is OVS's default: a trunk
// of every VLAN, which is anything but clean.
func vlanBehaviour(tags, trunks []int, mode string) (untagged int, carried vlan.Set) {
	tag := 0
	if len(tags) == 1 {
		tag = tags[0]
	}
	all, _ := vlan.RangeSet(vlan.MinID, vlan.MaxID)
	var trunked vlan.Set
	for _, id := range trunks {
		// OVS also takes 0 and 4095, which no configuration can name.
		trunked.Add(id)
	}
	if len(trunks) == 0 {
		trunked = all
	}
	switch {
	case mode == "access" || (mode == "" && tag != 0):
		return tag, vlan.Set{}
	case mode == "native-untagged":
		return tag, trunked
	case mode == "native-tagged":
		// ovs-vswitchd.conf.db(5): an untagged packet that ingresses is in the native VLAN
		// (tag), which egresses tagged. No configuration renders this, so the read, with the
		// tag both untagged and tagged, never matches one and the drift is seen.
		if tag != 0 {
			trunked.Add(tag)
		}
		return tag, trunked
	case mode == "dot1q-tunnel":
		// ovs-vswitchd.conf.db(5): like an access port, it carries packets on the single
		// VLAN in tag (tagged packets go in it too, double-tagged), whatever trunks says.
		return tag, vlan.Set{}
	default: // trunk, or no mode with trunks
		return 0, trunked
	}
}

// sameFlows reports whether the port holds exactly the OpenFlow rules the record renders,
// counted by the port's cookie and in_port (ovs-ofctl prints flows in its own canonical form).
func sameFlows(port string, acls []networkv1alpha1.ACL, dumped []string) bool {
	rules, err := rulesOf(acls)
	if err != nil {
		return false
	}
	want, err := openflow.Flows(cookieOf(port), port, rules)
	if err != nil {
		return false
	}
	mark := fmt.Sprintf("cookie=%#x,", cookieOf(port))
	n := 0
	for _, l := range dumped {
		if strings.Contains(l, mark) && onPort(l, port) {
			n++
		}
	}
	return n == len(want)
}

// onPort reports whether a dumped flow matches in_port=port (ovs-ofctl --names quotes a name
// that needs it).
func onPort(flow, port string) bool {
	for _, m := range []string{"in_port=" + port + ",", "in_port=" + port + " ", `in_port="` + port + `"`} {
		if strings.Contains(flow, m) {
			return true
		}
	}
	return false
}

// ovsRows reads the rows of `ovs-vsctl --format=json list`, by their name column.
func ovsRows(line string) (map[string]map[string]any, error) {
	var t struct {
		Data     [][]any  `json:"data"`
		Headings []string `json:"headings"`
	}
	if err := json.Unmarshal([]byte(line), &t); err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for _, d := range t.Data {
		if len(d) != len(t.Headings) {
			return nil, errors.New("a row does not match the headings")
		}
		row := map[string]any{}
		for i, h := range t.Headings {
			row[h] = d[i]
		}
		name := ovsString(row["name"])
		if name == "" {
			return nil, errors.New("a row has no name")
		}
		out[name] = row
	}
	return out, nil
}

// ovsAtoms unwraps OVSDB's JSON: a bare atom, or ["set", [atoms]].
func ovsAtoms(v any) []any {
	if a, ok := v.([]any); ok && len(a) == 2 && a[0] == "set" {
		inner, _ := a[1].([]any)
		return inner
	}
	return []any{v}
}

func ovsInts(v any) []int {
	var out []int
	for _, a := range ovsAtoms(v) {
		if f, ok := a.(float64); ok {
			out = append(out, int(f))
		}
	}
	return out
}

func ovsString(v any) string {
	for _, a := range ovsAtoms(v) {
		if s, ok := a.(string); ok {
			return s
		}
	}
	return ""
}

func ovsMap(v any) map[string]string {
	out := map[string]string{}
	a, ok := v.([]any)
	if !ok || len(a) != 2 || a[0] != "map" {
		return out
	}
	pairs, _ := a[1].([]any)
	for _, p := range pairs {
		kv, ok := p.([]any)
		if !ok || len(kv) != 2 {
			continue
		}
		k, _ := kv[0].(string)
		val, _ := kv[1].(string)
		out[k] = val
	}
	return out
}
