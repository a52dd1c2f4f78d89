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
	"net/netip"
	"testing"
)

// TestClaimReservationGoneBeforeTheNodeLooked: a VM's IPAMClaim lists an address in
// status.ips, and its reservation was deleted (whereabouts' ip-control-loop deletes every
// reservation whose podref is no pod) before this node ever read the network's claims: the
// node's first ADD must still not hand the VM's address to a pod.
func TestClaimReservationGoneBeforeTheNodeLooked(t *testing.T) {
	t.Setenv("NODENAME", "node-rv1")
	conf := netConf("1.1.0", "rvclaim", `"range":"10.120.0.0/24"`)
	claimWithIPs(t, "vmrv1", "tenant/rvclaim", "vmrv1.rvclaim", "rvclaim", "10.120.0.1/24")
	claimAddr := netip.MustParseAddr("10.120.0.1")
	// No reservation: the manager wrote one, whereabouts' reconciler deleted it.
	if got := firstAddr(t, attachment{conf: conf, container: "c-rvclaim-0", pod: "rvclaim-0"}); got == claimAddr {
		t.Fatalf("ADD got %s, the address VM vmrv1's IPAMClaim lists in status.ips", got)
	}
}
