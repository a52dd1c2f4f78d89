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

package slicing

import (
	"net/netip"
	"strings"

	"github.com/rackwire/rackwire/internal/cniconf"
)

// PoolName is the name whereabouts gives node's IPPool of slice in node-slice mode:
// <network_name>-<node>-<slice>, or <node>-<slice> without network_name, the slice with
// ":" and "/" as "-".
func (n Network) PoolName(node string, slice netip.Prefix) string {
	if n.Named {
		return cniconf.PoolName(n.Name, node, slice)
	}
	return cniconf.PoolName("", node, slice)
}

// NodeOfPool is the node whose IPPool (name, range) is in this network, if its name is one
// whereabouts gives in node-slice mode.
func (n Network) NodeOfPool(name, poolRange string) (string, bool) {
	rest, ok := strings.CutSuffix(name, "-"+cniconf.NormalizeRange(poolRange))
	if n.Named && ok {
		rest, ok = strings.CutPrefix(rest, n.Name+"-")
	}
	return rest, ok && rest != ""
}
