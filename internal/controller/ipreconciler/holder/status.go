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
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
)

// AnnotationNetworkStatus is the pod annotation in which Multus lists, after each ADD, the
// addresses each interface of the pod's current sandbox got.
const AnnotationNetworkStatus = "k8s.v1.cni.cncf.io/network-status"

// NetworkStatus reads the annotation's addresses per interface; nil when it is missing or
// does not parse (then it says nothing).
func NetworkStatus(annotation string) map[string][]netip.Addr {
	if annotation == "" {
		return nil
	}
	var st []struct {
		Interface string   `json:"interface"`
		IPs       []string `json:"ips"`
	}
	if json.Unmarshal([]byte(annotation), &st) != nil {
		return nil
	}
	out := map[string][]netip.Addr{}
	for _, s := range st {
		for _, ip := range s.IPs {
			if p, err := netip.ParsePrefix(ip); err == nil {
				ip = p.Addr().String()
			}
			if a, err := netip.ParseAddr(strings.TrimSpace(ip)); err == nil && s.Interface != "" {
				out[s.Interface] = append(out[s.Interface], a.Unmap())
			}
		}
	}
	return out
}

// listsSibling says whether the pod's network status gives the interface, instead of addr,
// one of the siblings: addresses the network's pools record for the same pod and interface
// under another container. The pod's current sandbox then holds a sibling, and addr is an
// earlier sandbox's. The annotation alone is not enough (anyone who may update the pod may
// write it): it only picks between the pod's own records.
func listsSibling(p *Pod, ifName string, addr netip.Addr, siblings []netip.Addr) bool {
	listed, ok := p.Interfaces[ifName]
	if !ok || !addr.IsValid() || slices.Contains(listed, addr) {
		return false
	}
	for _, s := range siblings {
		if slices.Contains(listed, s) {
			return true
		}
	}
	return false
}
