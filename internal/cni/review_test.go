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
	"bytes"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
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

// TestOnePoolTwoStateDirs: a NAD copied into another namespace with its own state_dir (any
// directory under the root is accepted) names the same pools as the original: same
// network_name, range and pools' namespace. On one node the two keep separate views of the
// one pool. With a pod's reservation gone (whereabouts' ip-control-loop deletes every
// reservation of a network with network_name), an ADD through the copy hands out the pod's
// address, and its flusher, finding no record of the pod in its own directory, takes the
// pod's pool entry over.
func TestOnePoolTwoStateDirs(t *testing.T) {
	t.Setenv("NODENAME", "node-rv2")
	slicePool(t, "rvdirs", "10.121.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-rv2", SliceRange: "10.121.0.16/28"})
	ipam := `"range":"10.121.0.0/24","node_slice_size":"/28"`
	orig := netConf("1.1.0", "rvdirs", ipam)
	other := filepath.Join(stateDir, "copy") // under the state root: the old check took it
	copied := bytes.Replace(netConf("1.1.0", "rvdirs", ipam), []byte(`"state_dir":"`+stateDir+`"`), []byte(`"state_dir":"`+other+`"`), 1)
	if bytes.Equal(orig, copied) {
		t.Fatal("the copy names the same state_dir")
	}
	// The copy's view of the pool first, then the original's pod. A copy refused for its
	// state_dir (naming the key) shares nothing, and hands out nothing.
	if _, _, err := (attachment{conf: copied, container: "c-rvdirs-q0", pod: "rvdirs-q0"}).add(); err != nil {
		if !strings.Contains(err.Error(), "ipam.state_dir: ") {
			t.Fatalf("ADD through the copied NAD: %v", err)
		}
		return
	}
	held := firstAddr(t, attachment{conf: orig, container: "c-rvdirs-p1", pod: "rvdirs-p1"})
	deleteReservation(t, "rvdirs", held)
	got := firstAddr(t, attachment{conf: copied, container: "c-rvdirs-q1", pod: "rvdirs-q1"})
	if got == held {
		t.Fatalf("ADD through the copied NAD got %s, live pod rvdirs-p1's address (in the pool: %v)", got,
			ippool(t, "rvdirs-node-rv2-10.121.0.16-28").Spec.Allocations)
	}
}

// TestGCKeepsAnotherNADOfThePool: two NADs whose configurations have different names (a NAD
// copied into a second namespace and renamed) allocate from the same pool (same
// network_name, range and namespace), so they share the node's directory. The runtime's GC of
// the first names only the first's attachments: it must not release the second's.
func TestGCKeepsAnotherNADOfThePool(t *testing.T) {
	t.Setenv("NODENAME", "node-rv3")
	confA := confOf("rvgc-a", "rvgc", `"range":"10.122.0.0/24"`)
	confB := confOf("rvgc-b", "rvgc", `"range":"10.122.0.0/24"`)
	a := attachment{conf: confA, container: "c-rvgc-a", pod: "rvgc-a"}
	b := attachment{conf: confB, container: "c-rvgc-b", pod: "rvgc-b"}
	a.mustAdd(t)
	addrB := firstAddr(t, b)
	// Network A's runtime knows of its own attachment only.
	gc(t, confA, a.container)
	if got := ippool(t, "rvgc-10.122.0.0-24").Spec.Allocations; len(got) != 2 {
		t.Errorf("NAD A's GC released NAD B's live attachment: the pool holds %v", got)
	}
	if _, ok := reservation(t, cni.ReservationName("rvgc", addrB)); !ok {
		t.Errorf("NAD A's GC deleted the reservation of NAD B's live %s", addrB)
	}
}

// TestTwoUnnamedSliceNetworksShareAPool: two NADs without network_name (whereabouts' unnamed
// network), with other configuration names and the same range, each sliced by its own
// NodeSlicePool: a node given the same slice by both writes one IPPool (node-slice pools of
// the unnamed network are named by node and slice only), yet keeps two views of it, keyed
// by the configuration names. With a pod's reservation gone, an ADD through the other NAD
// hands out the pod's address.
func TestTwoUnnamedSliceNetworksShareAPool(t *testing.T) {
	t.Setenv("NODENAME", "node-rv5")
	for _, n := range []string{"rvun-a", "rvun-b"} {
		slicePool(t, n, "10.125.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-rv5", SliceRange: "10.125.0.16/28"})
	}
	conf := func(name string) []byte {
		return fmt.Appendf(nil, `{"cniVersion":"1.1.0","name":%q,"type":"bridge","ipam":{"type":"rackwire",`+
			`"kubernetes":{"kubeconfig":%q},"state_dir":%q,"range":"10.125.0.0/24","node_slice_size":"/28"}}`, name, kubeconfig, stateDir)
	}
	a, b := conf("rvun-a"), conf("rvun-b")
	firstAddr(t, attachment{conf: b, container: "c-rvun-q0", pod: "rvun-q0"})
	held := firstAddr(t, attachment{conf: a, container: "c-rvun-p1", pod: "rvun-p1"})
	deleteReservation(t, "", held)
	if got := firstAddr(t, attachment{conf: b, container: "c-rvun-q1", pod: "rvun-q1"}); got == held {
		t.Fatalf("ADD through NAD rvun-b got %s, live pod rvun-p1's address (in the pool: %v)", got,
			ippool(t, "node-rv5-10.125.0.16-28").Spec.Allocations)
	}
}
