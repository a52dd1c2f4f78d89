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

package ipam

import (
	"net/netip"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// seedPool is the Metal3 seed's example: ranges .10-.15 of two /24s, pre-allocations
// below the first range.
func seedPool() *ipamv1alpha1.IPPoolSpec {
	a := func(s string) *ipamv1alpha1.IPAddressStr { return ptr.To(ipamv1alpha1.IPAddressStr(s)) }
	return &ipamv1alpha1.IPPoolSpec{
		NamePrefix: "provisioning",
		Pools: []ipamv1alpha1.Pool{
			{Start: a("192.168.0.10"), End: a("192.168.0.15"), Subnet: ptr.To(ipamv1alpha1.IPSubnetStr("192.168.0.0/24")), Gateway: a("192.168.0.1"), Prefix: 24},
			{Start: a("192.168.1.10"), End: a("192.168.1.15"), Subnet: ptr.To(ipamv1alpha1.IPSubnetStr("192.168.1.0/24")), Gateway: a("192.168.1.1"), Prefix: 24},
		},
		ExcludedAddresses: []ipamv1alpha1.IPRangeStr{"192.168.0.100-192.168.0.110"},
	}
}

func TestPreAllocations(t *testing.T) {
	for _, tc := range []struct {
		name, addr string
		wantErr    string
	}{
		{"inside a range", "192.168.0.11", ""},
		{"inside a subnet, below its range", "192.168.0.8", ""},
		{"the second subnet", "192.168.1.200", ""},
		{"a gateway", "192.168.0.1", "not an address of the pool"},
		{"a network address", "192.168.1.0", "not an address of the pool"},
		{"a broadcast address", "192.168.0.255", "not an address of the pool"},
		{"an excluded address", "192.168.0.105", "not an address of the pool"},
		{"outside every subnet", "10.0.0.1", "not an address of the pool"},
		{"not an address", "junk", "not an IP address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := seedPool()
			s.PreAllocations = map[string]ipamv1alpha1.IPAddressStr{"c": ipamv1alpha1.IPAddressStr(tc.addr)}
			pool, errs := BuildPool(s)
			if len(errs) > 0 {
				t.Fatalf("BuildPool: %v", errs)
			}
			got, errs := PreAllocations(s, pool)
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Fatalf("unexpected errors %v", errs)
			case tc.wantErr == "" && got["c"] != netip.MustParseAddr(tc.addr):
				t.Fatalf("got %v", got)
			case tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr) || errs[0].Field != "spec.preAllocations[c]"):
				t.Fatalf("errors %v, want one on spec.preAllocations[c] saying %q", errs, tc.wantErr)
			}
		})
	}
}

func TestParamsOfAPreAllocationOutsideTheRanges(t *testing.T) {
	s := seedPool()
	s.DNSServers = []ipamv1alpha1.IPAddressStr{"8.8.8.8"}
	pool, _ := BuildPool(s)
	p := paramsFor(s, pool, netip.MustParseAddr("192.168.1.8"))
	if p.Prefix != 24 || p.Gateway != netip.MustParseAddr("192.168.1.1") || len(p.DNSServers) != 1 {
		t.Fatalf("params %+v", p)
	}
}

func TestFieldErrorsKeepThePath(t *testing.T) {
	for _, tc := range []struct {
		want   string
		mutate func(*ipamv1alpha1.IPPoolSpec)
	}{
		{"spec.pools[1]", func(s *ipamv1alpha1.IPPoolSpec) { s.Pools[1].End = ptr.To(ipamv1alpha1.IPAddressStr("192.168.1.5")) }},
		{"spec.pools[0].dnsServers[1]", func(s *ipamv1alpha1.IPPoolSpec) { s.Pools[0].DNSServers = []ipamv1alpha1.IPAddressStr{"8.8.8.8", "x"} }},
		{"spec.excludedAddresses[1]", func(s *ipamv1alpha1.IPPoolSpec) {
			s.ExcludedAddresses = append(s.ExcludedAddresses, "192.168.0.9-192.168.0.1")
		}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			s := seedPool()
			tc.mutate(s)
			_, errs := BuildPool(s)
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Field, tc.want) {
				t.Fatalf("errors %v, want one on %s", errs, tc.want)
			}
		})
	}
}
