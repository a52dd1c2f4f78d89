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
)

// AddressName is the name of the IPAddress (of either kind) holding a, as
// ip-address-manager names it: the apiserver then refuses a second IPAddress of one kind
// for one address of a pool, whichever manager (a second replica, a stale leader,
// ip-address-manager itself) writes it. Trailing dashes are trimmed as upstream does
// ("fd00:1::" gives "<prefix>-fd00-1"), which also keeps the name valid.
func AddressName(namePrefix string, a netip.Addr) string {
	s := strings.NewReplacer(".", "-", ":", "-").Replace(a.Unmap().String())
	return strings.TrimRight(namePrefix+"-"+s, "-")
}
