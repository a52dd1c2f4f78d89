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

package main

import (
	"maps"
	"strings"
	"testing"
)

func TestParseServe(t *testing.T) {
	known := areaNames()
	for _, tc := range []struct {
		list string
		want map[string]bool
		err  string
	}{
		{list: strings.Join(known, ","), want: map[string]bool{"ipam": true, "switches": true, "node-slices": true, "persistent-ips": true}},
		{list: "node-slices, persistent-ips", want: map[string]bool{"node-slices": true, "persistent-ips": true}},
		// As the release components write it, one clusterctl variable per area.
		{list: "ipam=false,switches=true,node-slices=false,persistent-ips=true", want: map[string]bool{"ipam": false, "switches": true, "node-slices": false, "persistent-ips": true}},
		{list: "ipam,metal3", err: `unknown area "metal3"; the areas are ipam, switches, node-slices, persistent-ips`},
		{list: "ipam=yes", err: `area ipam="yes": the value must be true or false`},
		{list: "ipam=True", err: `area ipam="True": the value must be true or false`},
		{list: "ipam,ipam=false", err: `area "ipam" is named twice`},
		{list: "", err: "serves no area"},
		{list: "ipam=false,switches=false,node-slices=false,persistent-ips=false", err: "serves no area"},
	} {
		got, err := parseServe(tc.list, known)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("--serve=%q: error %v, want one containing %q", tc.list, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("--serve=%q: %v", tc.list, err)
			continue
		}
		if !maps.Equal(got, tc.want) {
			t.Errorf("--serve=%q: %v, want %v", tc.list, got, tc.want)
		}
	}
}
