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

// AddressName is the name of the Metal3 IPAddress holding a, as ip-address-manager names
// it: the apiserver then refuses a second IPAddress for one address of a pool.
func AddressName(namePrefix string, a netip.Addr) string {
	s := strings.NewReplacer(".", "-", ":", "-").Replace(a.Unmap().String())
	if strings.HasSuffix(s, "-") {
		// An IPv6 address ending in "::" would give a name ending in a dash, which is not a
		// valid object name; "::0" is the same address and no canonical form prints it.
		s += "0"
	}
	return namePrefix + "-" + s
}
