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

package openflow

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestMasks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"22", []string{"22"}},
		{"0-65535", nil},
		{"1024-2047", []string{"0x0400/0xfc00"}},
		{"1000-2000", []string{"0x03e8/0xfff8", "0x03f0/0xfff0", "0x0400/0xfe00", "0x0600/0xff00", "0x0700/0xff80", "0x0780/0xffc0", "0x07c0/0xfff0", "0x07d0/0xffff"}},
		{"65535", []string{"65535"}},
		{"65534-65535", []string{"0xfffe/0xfffe"}},
	} {
		r, err := ParsePortRange(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		var got []string
		for _, m := range Masks(r) {
			got = append(got, m.String())
		}
		// 0x07d0/0xffff prints as the plain port.
		for i, w := range tc.want {
			if w == "0x07d0/0xffff" {
				tc.want[i] = "2000"
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Masks(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParsePortRangeErrors(t *testing.T) {
	for _, in := range []string{"x", "70000", "20-10", "1-", "-1"} {
		if _, err := ParsePortRange(in); err == nil {
			t.Errorf("ParsePortRange(%q) accepted", in)
		}
	}
}

func TestFlows(t *testing.T) {
	rules := []Rule{
		{Protocol: "tcp", Src: netip.MustParsePrefix("10.0.0.0/8"), DstPorts: PortRange{22, 23}, Allow: true},
		{IPv6: true, Protocol: "icmp", Dst: netip.MustParsePrefix("fd00::1/64")},
		{},
	}
	got, err := Flows(0x72, "p1", rules)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"cookie=0x72,priority=40000,in_port=p1,tcp,nw_src=10.0.0.0/8,tp_dst=0x0016/0xfffe,actions=NORMAL",
		"cookie=0x72,priority=39999,in_port=p1,icmp6,ipv6_dst=fd00::/64,actions=drop",
		"cookie=0x72,priority=39998,in_port=p1,ip,actions=drop",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Flows =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFlowsCrossProduct(t *testing.T) {
	got, err := Flows(1, "p", []Rule{{Protocol: "udp", SrcPorts: PortRange{1, 3}, DstPorts: PortRange{4, 7}}})
	if err != nil {
		t.Fatal(err)
	}
	// 1-3 needs two blocks (1, 2-3), 4-7 one.
	if len(got) != 2 {
		t.Errorf("got %d flows, want 2: %v", len(got), got)
	}
}

func TestFlowsErrors(t *testing.T) {
	for name, r := range map[string]Rule{
		"ports without tcp/udp": {Protocol: "icmp", DstPorts: PortRange{1, 1}},
		"family mismatch":       {Src: netip.MustParsePrefix("fd00::/8")},
		"v4 on v6 rule":         {IPv6: true, Dst: netip.MustParsePrefix("10.0.0.0/8")},
		"unknown protocol":      {Protocol: "sctp"},
	} {
		if _, err := Flows(1, "p", []Rule{r}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Flows(1, "p", make([]Rule, MaxRules+1)); err == nil {
		t.Error("too many rules accepted")
	}
}
