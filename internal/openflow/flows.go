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
	"fmt"
	"net/netip"
	"strings"
)

// Rule is one access rule of a port.
type Rule struct {
	IPv6  bool
	Allow bool
	// Protocol is "tcp", "udp", "icmp" or "" for every protocol of the family.
	Protocol string
	// Src and Dst are the matched networks; the zero Prefix matches any address.
	Src, Dst netip.Prefix
	// SrcPorts and DstPorts match TCP and UDP ports only.
	SrcPorts, DstPorts PortRange
}

// TopPriority is the priority of a port's first rule; each later rule is one lower, and
// all sit above the bridge's own priority-0 NORMAL flow.
const TopPriority = 40000

// MaxRules bounds a port's rule list so that priorities stay above the bridge's own flows.
const MaxRules = 1000

// MaxFlows bounds the flows one port's rules render to. A rule with both port ranges costs
// the product of their masked matches (up to 30 x 30), so 64 wide rules would be 57,600
// flows: a run that carries them fails, and every port of that run with it.
const MaxFlows = 2000

// FlowCount is how many flows the rules render to, without rendering them.
func FlowCount(rules []Rule) int {
	n := 0
	for _, r := range rules {
		n += max(len(Masks(r.SrcPorts)), 1) * max(len(Masks(r.DstPorts)), 1)
	}
	return n
}

// Flows renders a port's rules as ovs-ofctl add-flows lines, every one tagged with the
// cookie so that the port's flows can be listed and removed without touching others.
// A rule whose port ranges need several masked matches becomes several flows of the same
// priority; they cannot overlap, so their order does not matter.
func Flows(cookie uint64, port string, rules []Rule) ([]string, error) {
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("%d rules on one port; at most %d", len(rules), MaxRules)
	}
	if n := FlowCount(rules); n > MaxFlows {
		return nil, fmt.Errorf("the rules render %d flows; at most %d per port", n, MaxFlows)
	}
	var out []string
	for i, r := range rules {
		match, err := r.match()
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		action := "drop"
		if r.Allow {
			action = "NORMAL"
		}
		head := fmt.Sprintf("cookie=%#x,priority=%d,in_port=%s,%s", cookie, TopPriority-i, port, match)
		srcs, dsts := portMatches("tp_src", r.SrcPorts), portMatches("tp_dst", r.DstPorts)
		for _, s := range srcs {
			for _, d := range dsts {
				out = append(out, head+s+d+",actions="+action)
			}
		}
	}
	return out, nil
}

// portMatches is the list of alternative port matches; one empty match for any port.
func portMatches(field string, r PortRange) []string {
	masks := Masks(r)
	if len(masks) == 0 {
		return []string{""}
	}
	out := make([]string, len(masks))
	for i, m := range masks {
		out[i] = "," + field + "=" + m.String()
	}
	return out
}

func (r Rule) match() (string, error) {
	var b strings.Builder
	proto := map[bool]map[string]string{
		false: {"": "ip", "tcp": "tcp", "udp": "udp", "icmp": "icmp"},
		true:  {"": "ipv6", "tcp": "tcp6", "udp": "udp6", "icmp": "icmp6"},
	}[r.IPv6][r.Protocol]
	if proto == "" {
		return "", fmt.Errorf("protocol %q is not one of tcp, udp, icmp or empty", r.Protocol)
	}
	b.WriteString(proto)
	src, dst := "nw_src", "nw_dst"
	if r.IPv6 {
		src, dst = "ipv6_src", "ipv6_dst"
	}
	for _, p := range []struct {
		field  string
		prefix netip.Prefix
	}{{src, r.Src}, {dst, r.Dst}} {
		if !p.prefix.IsValid() {
			continue
		}
		if p.prefix.Addr().Is6() != r.IPv6 || p.prefix.Addr().Is4In6() {
			return "", fmt.Errorf("network %s is not of the rule's family", p.prefix)
		}
		fmt.Fprintf(&b, ",%s=%s", p.field, p.prefix.Masked())
	}
	if (!r.SrcPorts.Any() || !r.DstPorts.Any()) && r.Protocol != "tcp" && r.Protocol != "udp" {
		return "", fmt.Errorf("port ranges need protocol tcp or udp, not %q", r.Protocol)
	}
	return b.String(), nil
}
