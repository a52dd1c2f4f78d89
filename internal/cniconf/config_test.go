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

package cniconf

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	p := netip.MustParsePrefix
	a := netip.MustParseAddr
	cases := []struct {
		name    string
		config  string
		want    Network
		wantErr string // substring; "" for none
		notOurs bool
	}{{
		name:   "single plugin, top-level allowPersistentIPs, unknown keys ignored",
		config: `{"cniVersion":"1.0.0","name":"tenantblue","type":"bridge","allowPersistentIPs":true,"whatever":{"x":1},"ipam":{"type":"rackwire","range":"10.10.0.0/24","gateway":"10.10.0.1","exclude":["10.10.0.8/29","10.10.0.200"],"future":true}}`,
		want: Network{Name: "tenantblue", PersistentIPs: true, Gateway: a("10.10.0.1"), Ranges: []Range{
			{Subnet: p("10.10.0.0/24"), Exclude: []netip.Prefix{p("10.10.0.8/29"), p("10.10.0.200/32")}},
		}},
	}, {
		name:   "conflist, flag in ipam, dual-stack range then ipRanges, network_name",
		config: `{"cniVersion":"1.0.0","name":"red","plugins":[{"type":"bridge","ipam":{"type":"static"}},{"type":"macvlan","ipam":{"type":"rackwire","allowPersistentIPs":true,"network_name":"redpool","range":"10.0.0.10-10.0.0.20/24","ipRanges":[{"range":"fd00::/64","range_start":"fd00::100","exclude":["fd00::101"]}]}},{"type":"tuning"}]}`,
		want: Network{Name: "red", NetworkName: "redpool", PersistentIPs: true, Ranges: []Range{
			{Subnet: p("10.0.0.0/24"), Start: a("10.0.0.10"), End: a("10.0.0.20")},
			{Subnet: p("fd00::/64"), Start: a("fd00::100"), Exclude: []netip.Prefix{p("fd00::101/128")}},
		}},
	}, {
		name:   "conflist, flag at the conflist's top level",
		config: `{"name":"green","allowPersistentIPs":true,"plugins":[{"type":"bridge","ipam":{"type":"rackwire","ipRanges":[{"range":"192.168.1.0/28"}],"node_slice_size":"/30"}}]}`,
		want:   Network{Name: "green", PersistentIPs: true, SliceSize: "/30", Ranges: []Range{{Subnet: p("192.168.1.0/28")}}},
	}, {
		name:   "flag on another plugin of the conflist does not count",
		config: `{"name":"blue","plugins":[{"type":"bridge","ipam":{"type":"rackwire","range":"10.1.0.0/16"}},{"type":"tuning","allowPersistentIPs":true}]}`,
		want:   Network{Name: "blue", Ranges: []Range{{Subnet: p("10.1.0.0/16")}}},
	}, {
		name:   "no persistent IPs",
		config: `{"name":"plain","type":"bridge","ipam":{"type":"rackwire","range":"10.2.0.5/24"}}`,
		want:   Network{Name: "plain", Ranges: []Range{{Subnet: p("10.2.0.0/24")}}},
	}, {
		name:    "whereabouts is not ours",
		config:  `{"name":"wb","type":"bridge","allowPersistentIPs":true,"ipam":{"type":"whereabouts","range":"10.3.0.0/24"}}`,
		notOurs: true,
	}, {
		name:    "OVN-Kubernetes is not ours",
		config:  `{"name":"ovn","type":"ovn-k8s-cni-overlay","subnets":"192.168.10.0/24","allowPersistentIPs":true}`,
		notOurs: true,
	}, {
		name:    "no range",
		config:  `{"name":"empty","type":"bridge","allowPersistentIPs":true,"ipam":{"type":"rackwire"}}`,
		want:    Network{Name: "empty", PersistentIPs: true},
		wantErr: "ipam.range: neither range nor ipRanges",
	}, {
		name:    "bad range in ipRanges",
		config:  `{"name":"bad","plugins":[{"type":"bridge","ipam":{"type":"rackwire","ipRanges":[{"range":"10.0.0.0/24"},{"range":"nope"}]}}]}`,
		wantErr: `plugins[0].ipam.ipRanges[1].range: "nope" is not a CIDR`,
	}, {
		name:    "range_start outside",
		config:  `{"name":"bad","type":"bridge","ipam":{"type":"rackwire","range":"10.0.0.0/24","range_start":"10.0.1.1"}}`,
		wantErr: "ipam.range_start: 10.0.1.1 is outside 10.0.0.0/24",
	}, {
		name:    "exclude of the other family",
		config:  `{"name":"bad","type":"bridge","ipam":{"type":"rackwire","range":"10.0.0.0/24","exclude":["fd00::/64"]}}`,
		wantErr: "ipam.exclude[0]: fd00::/64 is not of the range's address family",
	}, {
		name:    "nameless",
		config:  `{"type":"bridge","ipam":{"type":"rackwire","range":"10.0.0.0/24"}}`,
		wantErr: "name: a CNI configuration needs a name",
	}, {
		name:    "not JSON",
		config:  `{`,
		wantErr: "not a CNI configuration",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse([]byte(c.config))
			switch {
			case c.notOurs:
				if !errors.Is(err, ErrNotRackwire) {
					t.Fatalf("err = %v, want ErrNotRackwire", err)
				}
				return
			case c.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				if c.want.Name != "" && (got.Name != c.want.Name || got.PersistentIPs != c.want.PersistentIPs) {
					t.Fatalf("on error got name %q persistent %v, want %q %v", got.Name, got.PersistentIPs, c.want.Name, c.want.PersistentIPs)
				}
				return
			case err != nil:
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
			if !got.Same(c.want) {
				t.Fatal("Same is false for equal networks")
			}
		})
	}
}

func TestSame(t *testing.T) {
	base := `{"name":"n","type":"bridge","ipam":{"type":"rackwire","range":"10.0.0.0/24","exclude":["10.0.0.9"]}}`
	n, _ := Parse([]byte(base))
	for _, other := range []string{
		`{"name":"n","type":"bridge","ipam":{"type":"rackwire","range":"10.0.0.0/25","exclude":["10.0.0.9"]}}`,
		`{"name":"n","type":"bridge","ipam":{"type":"rackwire","range":"10.0.0.0/24","exclude":["10.0.0.10"]}}`,
		`{"name":"n","type":"bridge","ipam":{"type":"rackwire","range":"10.0.0.0/24","exclude":["10.0.0.9"],"gateway":"10.0.0.1"}}`,
		`{"name":"n","type":"bridge","ipam":{"type":"rackwire","range":"10.0.0.0/24","exclude":["10.0.0.9"],"network_name":"x"}}`,
		`{"name":"n","type":"bridge","ipam":{"type":"rackwire","range":"10.0.0.0/24","exclude":["10.0.0.9"],"ipRanges":[{"range":"fd00::/64"}]}}`,
	} {
		o, err := Parse([]byte(other))
		if err != nil {
			t.Fatal(err)
		}
		if n.Same(o) {
			t.Errorf("Same(%s) is true", other)
		}
	}
}
