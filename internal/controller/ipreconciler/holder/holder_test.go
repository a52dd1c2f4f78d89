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

package holder

import (
	"net/netip"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	created := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	pod := &Pod{UID: "u2", Created: created, Node: "n1"}
	skew := 2 * time.Second
	for _, c := range []struct {
		name   string
		pod    *Pod
		node   bool
		ev     Evidence
		reason Reason
	}{
		{"no pod of that name", nil, false, Evidence{}, PodGone},
		{"the pod, reserved after it was created", pod, true, Evidence{ReservedAt: created.Add(time.Second)}, Alive},
		{"reserved within the skew before it was created", pod, true, Evidence{ReservedAt: created.Add(-skew)}, Alive},
		{"reserved before the pod of that name was created", pod, true, Evidence{ReservedAt: created.Add(-skew - time.Second)}, PodReplaced},
		{"another UID recorded", pod, true, Evidence{UID: "u1", ReservedAt: created.Add(time.Second)}, PodReplaced},
		{"its UID recorded beats an old reservation", pod, true, Evidence{UID: "u2", ReservedAt: created.Add(-time.Hour)}, Alive},
		{"nothing known but the name", pod, true, Evidence{}, Alive},
		{"a later sandbox of the pod holds the interface", pod, true, Evidence{UID: "u2", ReservedAt: created.Add(time.Second), Superseded: true}, PodReplaced},
		{"superseded, the pod gone", nil, false, Evidence{Superseded: true}, PodGone},
		{"finished", &Pod{UID: "u2", Created: created, Node: "n1", Finished: true}, true, Evidence{}, PodFinished},
		{"its Node deleted", pod, false, Evidence{}, NodeGone},
		{"not scheduled", &Pod{UID: "u2", Created: created}, false, Evidence{}, Alive},
		{"the network status lists a sibling instead", withStatus(pod, "net1", "10.0.0.6"), true, evAt("10.0.0.5", "10.0.0.6"), PodReplaced},
		{"the network status lists the record's address", withStatus(pod, "net1", "10.0.0.5"), true, evAt("10.0.0.5", "10.0.0.6"), Alive},
		{"the network status lists an address the pod has no record of", withStatus(pod, "net1", "10.0.0.9"), true, evAt("10.0.0.5", "10.0.0.6"), Alive},
		{"the network status lists a sibling on another interface", withStatus(pod, "net2", "10.0.0.6"), true, evAt("10.0.0.5", "10.0.0.6"), Alive},
		{"no network status", pod, true, evAt("10.0.0.5", "10.0.0.6"), Alive},
	} {
		if got := Judge(c.pod, c.node, c.ev, skew); got != c.reason {
			t.Errorf("%s: got %q, want %q", c.name, got, c.reason)
		}
	}
}

func TestPodRef(t *testing.T) {
	for ref, ok := range map[string]bool{"apps/web-1": true, "web-1": false, "/web": false, "apps/": false, "a/b/c": false} {
		if _, _, got := PodRef(ref); got != ok {
			t.Errorf("PodRef(%q) = %v, want %v", ref, got, ok)
		}
	}
}

func TestOffsets(t *testing.T) {
	for _, c := range []struct{ pool, addr, key string }{
		{"10.0.0.0/24", "10.0.0.5", "5"},
		{"10.0.0.16/28", "10.0.0.17", "1"},
		// From 2^63 on, whereabouts' ParseInt reads only the negative int64 of the offset.
		{"fd00::/64", "fd00::ffff:ffff:ffff:fffe", "-2"},
		{"fd00::/64", "fd00::7fff:ffff:ffff:ffff", "9223372036854775807"},
		{"fd00::/48", "fd00:0:0:1::", "18446744073709551616"},
	} {
		p, a := netip.MustParsePrefix(c.pool), netip.MustParseAddr(c.addr)
		key, ok := Offset(p, a)
		if !ok || key != c.key {
			t.Errorf("Offset(%s, %s) = %q %v, want %q", p, a, key, ok, c.key)
		}
		back, ok := AddressAt(p, key)
		if !ok || back != a {
			t.Errorf("AddressAt(%s, %s) = %s %v, want %s", p, key, back, ok, a)
		}
	}
	// whereabouts' ParseInt reads "+1" as 1, and so does rackwire.
	if a, ok := AddressAt(netip.MustParsePrefix("10.0.0.0/24"), "+1"); !ok || a != netip.MustParseAddr("10.0.0.1") {
		t.Errorf(`AddressAt(10.0.0.0/24, "+1") = %s %v, want 10.0.0.1`, a, ok)
	}
	for _, key := range []string{"256", "-1", "x", ""} {
		if a, ok := AddressAt(netip.MustParsePrefix("10.0.0.0/24"), key); ok {
			t.Errorf("AddressAt(10.0.0.0/24, %q) = %s, want none", key, a)
		}
	}
	if _, ok := Offset(netip.MustParsePrefix("10.0.0.0/24"), netip.MustParseAddr("10.0.1.0")); ok {
		t.Error("Offset of an address outside the pool")
	}
}

func TestOwnsPool(t *testing.T) {
	named := Scope{NetworkName: "blue", Ranges: []netip.Prefix{netip.MustParsePrefix("10.70.0.0/24")}}
	unnamed := Scope{Ranges: []netip.Prefix{netip.MustParsePrefix("10.70.0.0/24")}, Named: []string{"blue"}}
	for _, c := range []struct {
		scope     Scope
		name, rng string
		want      bool
	}{
		{named, "blue-10.70.0.0-24", "10.70.0.0/24", true},
		{named, "blue-node-1-10.70.0.16-28", "10.70.0.16/28", true},
		{named, "red-10.70.0.0-24", "10.70.0.0/24", false},
		{named, "blue-10.71.0.0-24", "10.71.0.0/24", false},
		{named, "blue--10.70.0.16-28", "10.70.0.16/28", false},
		{unnamed, "10.70.0.0-24", "10.70.0.0/24", true},
		{unnamed, "node-1-10.70.0.16-28", "10.70.0.16/28", true},
		{unnamed, "blue-node-1-10.70.0.16-28", "10.70.0.16/28", false},
		{unnamed, "x-10.70.0.0-16", "10.70.0.0/16", false},
	} {
		if got := c.scope.OwnsPool(c.name, c.rng); got != c.want {
			t.Errorf("scope %q OwnsPool(%s, %s) = %v, want %v", c.scope.NetworkName, c.name, c.rng, got, c.want)
		}
	}
}

func withStatus(p *Pod, ifName, addr string) *Pod {
	c := *p
	c.Interfaces = NetworkStatus(`[{"name":"apps/blue","interface":"` + ifName + `","ips":["` + addr + `"]}]`)
	return &c
}

func evAt(addr string, siblings ...string) Evidence {
	ev := Evidence{Addr: netip.MustParseAddr(addr), IfName: "net1"}
	for _, s := range siblings {
		ev.Siblings = append(ev.Siblings, netip.MustParseAddr(s))
	}
	return ev
}

func TestNetworkStatus(t *testing.T) {
	got := NetworkStatus(`[{"name":"k8s-pod-network","interface":"eth0","ips":["10.244.1.5"],"default":true},` +
		`{"name":"apps/blue","interface":"net1","ips":["10.0.0.6/24","fd00::6"]}]`)
	if len(got["net1"]) != 2 || got["net1"][0] != netip.MustParseAddr("10.0.0.6") || got["eth0"][0] != netip.MustParseAddr("10.244.1.5") {
		t.Errorf("NetworkStatus = %v", got)
	}
	if NetworkStatus("not json") != nil || NetworkStatus("") != nil {
		t.Error("an unreadable annotation says something")
	}
}
