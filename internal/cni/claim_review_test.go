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
	"testing"
)

// TestTwoInterfacesOnOneNAD: a VM may attach two of its networks through the same NAD
// (networks "a" and "b", both tenant/twonad); rackwire's VM controller makes one claim for
// each ("vmt.a", "vmt.b"), each with its own address. A launcher pod admitted without
// references (the webhook was down) must not get the same address on both interfaces: each
// interface takes its own claim, or the plugin refuses the one it cannot tell apart.
func TestTwoInterfacesOnOneNAD(t *testing.T) {
	t.Setenv("NODENAME", "node-t")
	conf := netConf("1.1.0", "twonics", `"range":"10.81.0.0/24"`, `"allowPersistentIPs":true`)
	claimWithIPs(t, "vmt", "tenant/twonad", "vmt.a", "twonics", "10.81.0.30/24")
	claimWithIPs(t, "vmt", "tenant/twonad", "vmt.b", "twonics", "10.81.0.31/24")
	launcher(t, "vmt", "virt-launcher-vmt",
		`[{"name":"twonad","namespace":"tenant","interface":"poda"},{"name":"twonad","namespace":"tenant","interface":"podb"}]`)
	resA, _, errA := attachment{conf: conf, container: "c-vmt", ifName: "poda", pod: "virt-launcher-vmt"}.add()
	resB, _, errB := attachment{conf: conf, container: "c-vmt", ifName: "podb", pod: "virt-launcher-vmt"}.add()
	if errA != nil || errB != nil {
		return // refused: no address twice
	}
	if a, b := addrs(resA), addrs(resB); len(a) == 1 && len(b) == 1 && a[0] == b[0] {
		t.Errorf("both interfaces of VM vmt on NAD tenant/twonad got %s: claim vmt.a's address twice, vmt.b's unused", a[0])
	}
}
