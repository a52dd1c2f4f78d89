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

package cni_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestOldSpecVersions: 0.1.0 and 0.2.0 are accepted as whereabouts accepts them (the binary
// answers in that version), and more than one address of a family is refused there, naming
// cniVersion.
func TestOldSpecVersions(t *testing.T) {
	for i, tc := range []struct {
		version, ipam, err string
	}{
		{"0.1.0", `"range":"10.61.1.0/29"`, ""},
		{"0.2.0", `"range":"10.61.2.0/29","ipRanges":[{"range":"fd00:61:2::/120"}]`, ""},
		{"0.2.0", `"range":"10.61.3.0/29","ipRanges":[{"range":"10.61.4.0/29"}]`, "does not support more than one address per family"},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.version, i), func(t *testing.T) {
			name := fmt.Sprintf("oldver%d", i)
			conf := netConf(tc.version, name, tc.ipam)
			out, err := runPlugin("ADD", conf, "c-"+name, "node-o", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+name)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ADD: %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				CNIVersion string `json:"cniVersion"`
				IP4        *struct {
					IP string `json:"ip"`
				} `json:"ip4"`
			}
			if err := json.Unmarshal(out, &res); err != nil || res.CNIVersion != tc.version || res.IP4 == nil || !strings.HasPrefix(res.IP4.IP, "10.61.") {
				t.Errorf("result %s (%v), want a %s result with ip4", out, err, tc.version)
			}
			if _, err := runPlugin("DEL", conf, "c-"+name, "node-o", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+name); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLastIPv6NeverHandedOut: as whereabouts (LastUsableIP), the last address of an IPv6
// range or node slice is never handed out: a /125 holds six.
func TestLastIPv6NeverHandedOut(t *testing.T) {
	slicePool(t, "lastv6s", "fd00:62:1::/120", "/125", wbv1.NodeSliceAllocation{NodeName: "node-6", SliceRange: "fd00:62:1::8/125"})
	for _, tc := range []struct {
		name, ipam string
		last       netip.Addr
	}{
		{"lastv6r", `"range":"fd00:62::/125"`, netip.MustParseAddr("fd00:62::7")},
		{"lastv6s", `"range":"fd00:62:1::/120","node_slice_size":"/125"`, netip.MustParseAddr("fd00:62:1::f")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NODENAME", "node-6")
			conf := netConf("1.1.0", tc.name, tc.ipam)
			for i := range 7 {
				a := attachment{conf: conf, container: fmt.Sprintf("c-%s-%d", tc.name, i), pod: fmt.Sprintf("%s-%d", tc.name, i)}
				res, _, err := a.add()
				if i == 6 {
					if err == nil || !strings.Contains(err.Error(), "no free address") {
						t.Errorf("a seventh ADD in a /125: %v %v", err, res)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := netip.MustParsePrefix(addrs(res)[0]).Addr(); got == tc.last {
					t.Errorf("ADD #%d handed out the last address %s", i, got)
				}
			}
		})
	}
}

// TestOffsetPast2To63: an address 2^63 past a /64's network address is written under the
// key whereabouts reads back as that offset (ParseInt, then uint64).
func TestOffsetPast2To63(t *testing.T) {
	t.Setenv("NODENAME", "node-6")
	conf := netConf("1.1.0", "bigoff", `"range":"fd00:63::/64","range_start":"fd00:63::8000:0:0:0"`)
	a := attachment{conf: conf, container: "c-bigoff", pod: "bigoff"}
	if got := addrs(a.mustAdd(t)); got[0] != "fd00:63:0:0:8000::/64" {
		t.Fatalf("ADD gave %v", got)
	}
	if got := ippool(t, "bigoff-fd00-63---64").Spec.Allocations; len(got) != 1 || got["-9223372036854775808"].ContainerID != a.container {
		t.Errorf("allocations %v, want the key -9223372036854775808", got)
	}
	if err := a.del(); err != nil {
		t.Fatal(err)
	}
	if got := ippool(t, "bigoff-fd00-63---64").Spec.Allocations; len(got) != 0 {
		t.Errorf("after DEL: %v", got)
	}
}

// TestNoOverlappingRanges: with enable_overlapping_ranges false, as whereabouts, no
// reservation is written; the pool entry, written before ADD answers even with node slices,
// is the lock.
func TestNoOverlappingRanges(t *testing.T) {
	slicePool(t, "noovls", "10.63.1.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-n", SliceRange: "10.63.1.16/28"})
	for _, tc := range []struct{ name, ipam, pool string }{
		{"noovlp", `"range":"10.63.0.0/24","enable_overlapping_ranges":false`, "noovlp-10.63.0.0-24"},
		{"noovls", `"range":"10.63.1.0/24","node_slice_size":"/28","enable_overlapping_ranges":false`, "noovls-node-n-10.63.1.16-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := netConf("1.1.0", tc.name, tc.ipam)
			seen := map[netip.Addr]bool{}
			for i := range 3 {
				id := fmt.Sprintf("c-%s-%d", tc.name, i)
				a := addProcess(t, conf, "node-n", id)
				if seen[a] {
					t.Fatalf("%s handed out twice", a)
				}
				seen[a] = true
				if _, ok := reservation(t, cni.ReservationName(tc.name, a)); ok {
					t.Errorf("a reservation of %s was written", a)
				}
				pr := netip.MustParsePrefix(ippool(t, tc.pool).Spec.Range)
				if got := ippool(t, tc.pool).Spec.Allocations[cni.Offset(pr, a)].ContainerID; got != id {
					t.Errorf("the pool records %s for %q when ADD answered, want %s", a, got, id)
				}
			}
			for i := range 3 {
				id := fmt.Sprintf("c-%s-%d", tc.name, i)
				if _, err := runPlugin("DEL", conf, id, "node-n", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
					t.Fatal(err)
				}
			}
			if got := ippool(t, tc.pool).Spec.Allocations; len(got) != 0 {
				t.Errorf("after DEL: %v", got)
			}
		})
	}
}

// TestUnknownFlatFileKeyLogged: a key of the flat file rackwire does not know (whereabouts'
// installer writes that file for every network of the node) is ignored and logged.
func TestUnknownFlatFileKeyLogged(t *testing.T) {
	t.Setenv("NODENAME", "node-f")
	dir := tempDir(t)
	flat, logFile := dir+"/whereabouts.conf", dir+"/rackwire.log"
	if err := os.WriteFile(flat, []byte(`{"datastore":"kubernetes","some_future_key":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := netConf("1.1.0", "flatkeys", fmt.Sprintf(`"range":"10.64.1.0/29","configuration_path":%q,"log_file":%q`, flat, logFile))
	a := attachment{conf: conf, container: "c-flatkeys", pod: "flatkeys"}
	a.mustAdd(t)
	b, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(b), `[warning] network "flatkeys": flat file `+flat+`: unknown key "some_future_key" ignored`) {
		t.Errorf("log file: %q %v", b, err)
	}
	if err := a.del(); err != nil {
		t.Fatal(err)
	}
}
