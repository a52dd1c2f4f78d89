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
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// confOf is a network whose configuration name and network_name differ.
func confOf(name, networkName, ipam string) []byte {
	return fmt.Appendf(nil, `{"cniVersion":"1.1.0","name":%q,"type":"bridge","ipam":{"type":"rackwire","network_name":%q,`+
		`"kubernetes":{"kubeconfig":%q},"state_dir":%q,%s}}`, name, networkName, kubeconfig, stateDir, ipam)
}

func firstAddr(t *testing.T, a attachment) netip.Addr {
	t.Helper()
	res := a.mustAdd(t)
	p, err := netip.ParsePrefix(addrs(res)[0])
	if err != nil {
		t.Fatal(err)
	}
	return p.Addr()
}

func gc(t *testing.T, conf []byte, valid ...string) {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal(conf, &m); err != nil {
		t.Fatal(err)
	}
	va := []types.GCAttachment{}
	for _, v := range valid {
		va = append(va, types.GCAttachment{ContainerID: v, IfName: "net1"})
	}
	m["cni.dev/valid-attachments"] = va
	b, _ := json.Marshal(m)
	if err := cni.GC(&skel.CmdArgs{StdinData: b}); err != nil {
		t.Fatalf("GC: %v", err)
	}
}

// TestSameNameOtherPools: two NADs with one configuration name but another network_name and
// range (a NAD copied and edited) on one node: the second never uses the first's slice.
func TestSameNameOtherPools(t *testing.T) {
	t.Setenv("NODENAME", "node-twin")
	slicePool(t, "twin-a", "10.90.0.0/24", "/26", wbv1.NodeSliceAllocation{NodeName: "node-twin", SliceRange: "10.90.0.0/26"})
	slicePool(t, "twin-b", "10.91.0.0/24", "/26", wbv1.NodeSliceAllocation{NodeName: "node-twin", SliceRange: "10.91.0.0/26"})
	a := attachment{conf: confOf("twin", "twin-a", `"range":"10.90.0.0/24","node_slice_size":"/26"`), container: "c-twin-a", pod: "twin-a"}
	b := attachment{conf: confOf("twin", "twin-b", `"range":"10.91.0.0/24","node_slice_size":"/26"`), container: "c-twin-b", pod: "twin-b"}
	if got := firstAddr(t, a); got != netip.MustParseAddr("10.90.0.1") {
		t.Fatalf("network A gave %s", got)
	}
	if got := firstAddr(t, b); !netip.MustParsePrefix("10.91.0.0/26").Contains(got) {
		t.Fatalf("network B (10.91.0.0/24) gave %s: it used network A's slice", got)
	}
	for _, x := range []attachment{a, b} {
		if err := x.del(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGCKeepsTheOtherNetwork: GC of one network does not release the attachments of another
// with the same configuration name and network_name but another range.
func TestGCKeepsTheOtherNetwork(t *testing.T) {
	t.Setenv("NODENAME", "node-gctwin")
	confA := confOf("gctwin", "gctwin", `"range":"10.92.0.0/24"`)
	confB := confOf("gctwin", "gctwin", `"range":"10.93.0.0/24"`)
	a := attachment{conf: confA, container: "c-gctwin-a", pod: "gctwin-a"}
	b := attachment{conf: confB, container: "c-gctwin-b", pod: "gctwin-b"}
	a.mustAdd(t)
	addrB := firstAddr(t, b)
	// Network A's runtime knows of none of its attachments.
	gc(t, confA)
	if got := ippool(t, "gctwin-10.92.0.0-24").Spec.Allocations; len(got) != 0 {
		t.Errorf("network A after its GC: %v", got)
	}
	if got := ippool(t, "gctwin-10.93.0.0-24").Spec.Allocations; len(got) != 1 || got["1"].ContainerID != b.container {
		t.Errorf("network A's GC released network B's attachment: B's pool holds %v", got)
	}
	if _, ok := reservation(t, cni.ReservationName("gctwin", addrB)); !ok {
		t.Errorf("network A's GC deleted the reservation of network B's %s", addrB)
	}
	if err := b.del(); err != nil {
		t.Fatal(err)
	}
}

// TestCachedSliceOutsideTheRange: a cached slice is used only inside the NAD's own range,
// and a NodeSlicePool whose slice lies outside it (another NAD of the same network_name with
// another range) is refused, naming both.
func TestCachedSliceOutsideTheRange(t *testing.T) {
	t.Setenv("NODENAME", "node-cc")
	slicePool(t, "cachecheck", "10.94.0.0/24", "/26", wbv1.NodeSliceAllocation{NodeName: "node-cc", SliceRange: "10.94.0.64/26"})
	conf := confOf("cachecheck", "cachecheck", `"range":"10.94.0.0/24","node_slice_size":"/26"`)
	slice := netip.MustParsePrefix("10.94.0.64/26")
	if got := firstAddr(t, attachment{conf: conf, container: "c-cc-0", pod: "cc-0"}); !slice.Contains(got) {
		t.Fatalf("first ADD gave %s", got)
	}
	dirs, _ := filepath.Glob(filepath.Join(stateDir, "node-cc", "cachecheck@*"))
	if len(dirs) != 1 {
		t.Fatalf("state directories of the network: %v", dirs)
	}
	sliceFile := filepath.Join(dirs[0], ".slice")
	b, err := os.ReadFile(sliceFile)
	v := map[string]any{}
	if err != nil || json.Unmarshal(b, &v) != nil {
		t.Fatalf("cached slice: %s %v", b, err)
	}
	// A fresh cache naming a slice of another range.
	v["slice"], v["read"] = "10.95.0.0/26", time.Now()
	b, _ = json.Marshal(v)
	if err := os.WriteFile(sliceFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := firstAddr(t, attachment{conf: conf, container: "c-cc-1", pod: "cc-1"}); !slice.Contains(got) {
		t.Errorf("ADD gave %s from a cached slice outside the NAD's range", got)
	}
	// The same network_name with another range: the manager's NodeSlicePool is not this NAD's.
	other := confOf("cachecheck-copy", "cachecheck", `"range":"10.96.0.0/24","node_slice_size":"/26"`)
	_, _, err = attachment{conf: other, container: "c-cc-2", pod: "cc-2"}.add()
	if err == nil || !strings.Contains(err.Error(), "outside this NAD's range 10.96.0.0/24") {
		t.Errorf("ADD with a NodeSlicePool of another range: %v", err)
	}
	for i := range 2 {
		if err := (attachment{conf: conf, container: fmt.Sprintf("c-cc-%d", i), pod: fmt.Sprintf("cc-%d", i)}).del(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUpgradeFromNameKeyedState: records of the layout keyed by the configuration's name
// are still released by DEL, and by GC only for the network they belong to.
func TestUpgradeFromNameKeyedState(t *testing.T) {
	t.Setenv("NODENAME", "node-up")
	confA := confOf("upnet", "upnet-a", `"range":"10.97.0.0/24"`)
	confB := confOf("upnet", "upnet-b", `"range":"10.98.0.0/24"`)
	a1 := attachment{conf: confA, container: "c-up-a1", pod: "up-a1"}
	a2 := attachment{conf: confA, container: "c-up-a2", pod: "up-a2"}
	b := attachment{conf: confB, container: "c-up-b", pod: "up-b"}
	addrs := map[string]netip.Addr{}
	for _, x := range []attachment{a1, a2, b} {
		addrs[x.container] = firstAddr(t, x)
	}
	// Move every record into the old layout, as the previous version left them.
	legacy := filepath.Join(stateDir, "node-up", "upnet")
	if err := os.MkdirAll(legacy, 0o700); err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(stateDir, "node-up", "upnet*@*", "c-up-*"))
	if len(recs) != 3 {
		t.Fatalf("records: %v", recs)
	}
	for _, r := range recs {
		if err := os.Rename(r, filepath.Join(legacy, filepath.Base(r))); err != nil {
			t.Fatal(err)
		}
	}
	if err := a1.del(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(legacy, "c-up-a1_net1")); !os.IsNotExist(err) {
		t.Errorf("DEL left the old record: %v", err)
	}
	if _, ok := reservation(t, cni.ReservationName("upnet-a", addrs[a1.container])); ok {
		t.Errorf("DEL left the reservation of a record of the old layout")
	}
	gc(t, confA)
	if got := ippool(t, "upnet-a-10.97.0.0-24").Spec.Allocations; len(got) != 0 {
		t.Errorf("GC left network A's old records in its pool: %v", got)
	}
	if got := ippool(t, "upnet-b-10.98.0.0-24").Spec.Allocations; len(got) != 1 {
		t.Errorf("network A's GC released network B's old record: %v", got)
	}
	if _, err := os.Stat(filepath.Join(legacy, "c-up-b_net1")); err != nil {
		t.Errorf("network B's old record: %v", err)
	}
	if err := b.del(); err != nil {
		t.Fatal(err)
	}
	if got := ippool(t, "upnet-b-10.98.0.0-24").Spec.Allocations; len(got) != 0 {
		t.Errorf("DEL of network B's old record: %v", got)
	}
}
