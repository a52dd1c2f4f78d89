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
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/utils"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// runPluginIf is runPlugin with the interface name given.
func runPluginIf(verb string, conf []byte, container, ifName, node, args string) ([]byte, error) {
	cmd := exec.Command(plugin)
	cmd.Env = append(os.Environ(), "CNI_COMMAND="+verb, "CNI_CONTAINERID="+container, "CNI_NETNS=/var/run/netns/"+container,
		"CNI_IFNAME="+ifName, "CNI_PATH=/nonexistent", "CNI_ARGS="+args, "NODENAME="+node)
	cmd.Stdin = bytes.NewReader(conf)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s/%s on %s: %v: %s %s", verb, container, ifName, node, err, strings.TrimSpace(out.String()), errOut.String())
	}
	return out.Bytes(), nil
}

// addIf runs ADD of container's interface ifName in a plugin process and returns its address.
func addIf(t *testing.T, conf []byte, container, ifName, node string) netip.Addr {
	t.Helper()
	out, err := runPluginIf("ADD", conf, container, ifName, node, podArgs(container))
	if err != nil {
		t.Fatal(err)
	}
	r := &current.Result{}
	if err := json.Unmarshal(out, r); err != nil {
		t.Fatal(err)
	}
	a, _ := netip.AddrFromSlice(r.IPs[0].Address.IP)
	return a.Unmap()
}

// TestReview36InterfaceNamedLikeATwinKeepsItsRecord: a record's twin is <record>.tmp, and a
// record is <container>_<interface>: the twin of interface "n" is the record of interface
// "n.tmp" of the same pod (a name the runtime's check lets through). The save of one
// truncates and renames the other's record: the attachment "n.tmp", answered with an address
// whose entry the flusher has not written yet, is then forgotten, its marker dropped by the
// flusher as a record naming another attachment, and its DEL frees nothing: its reservation
// stays for good.
func TestReview36InterfaceNamedLikeATwinKeepsItsRecord(t *testing.T) {
	const name, node = "r36twin", "node-r36w"
	slicePool(t, name, "10.136.3.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.136.3.16/28"})
	slice, pool := netip.MustParsePrefix("10.136.3.16/28"), "r36twin-node-r36w-10.136.3.16-28"
	conf := netConf("1.1.0", name, `"range":"10.136.3.0/24","node_slice_size":"/28"`)
	// A first pod makes the node's directory.
	o := addProcess(t, conf, node, "c-r36w-o")
	poolEntry(t, pool, slice, o, "c-r36w-o")
	dir := netDir(t, node, name)
	flusherGone(t, dir)

	// Both ADDs answer before any flusher writes (a burst: they come within its window).
	release := holdFlusher(t, dir)
	dotTmp := addIf(t, conf, "c-r36w", "n.tmp", node)
	plain := addIf(t, conf, "c-r36w", "n", node)
	if n := recordsOf(t, dir, "c-r36w", "n.tmp"); n != 1 {
		t.Errorf("after the ADD of interface n, %d records of interface n.tmp (%s) are in the node's directory", n, dotTmp)
	}
	release()
	flusherGone(t, dir)

	for _, ifName := range []string{"n.tmp", "n"} {
		if _, err := runPluginIf("DEL", conf, "c-r36w", ifName, node, podArgs("c-r36w")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runPlugin("DEL", conf, "c-r36w-o", node, podArgs("c-r36w-o")); err != nil {
		t.Fatal(err)
	}
	flusherGone(t, dir)
	eventually(t, func() error {
		for _, a := range []netip.Addr{dotTmp, plain, o} {
			if r, ok := reservation(t, cni.ReservationName(name, a)); ok {
				return fmt.Errorf("reservation of %s left for %s/%s after every DEL", a, r.Spec.ContainerID, r.Spec.IfName)
			}
		}
		if got := ippool(t, pool).Spec.Allocations; len(got) != 0 {
			return fmt.Errorf("pool entries left after every DEL: %v", got)
		}
		return nil
	})
}

// TestReview36GCReleasesAnInterfaceNamedDotTmp: GC reads every record of the node but those
// whose names end in ".tmp", taken for twins: an attachment whose interface is "n1.tmp" and
// whose DEL never came is never released by GC, its pool entry and reservation held for good.
func TestReview36GCReleasesAnInterfaceNamedDotTmp(t *testing.T) {
	const node = "node-r36g"
	t.Setenv("NODENAME", node)
	conf := netConf("1.1.0", "r36gc", `"range":"10.136.4.0/24"`)
	a := attachment{conf: conf, container: "c-r36g", ifName: "n1.tmp", pod: "r36g"}
	addr, err := netip.ParsePrefix(addrs(a.mustAdd(t))[0])
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(conf, &m); err != nil {
		t.Fatal(err)
	}
	m["cni.dev/valid-attachments"] = []types.GCAttachment{}
	b, _ := json.Marshal(m)
	if err := cni.GC(&skel.CmdArgs{StdinData: b}); err != nil {
		t.Fatalf("GC: %v", err)
	}
	if r, ok := reservation(t, cni.ReservationName("r36gc", addr.Addr())); ok {
		t.Errorf("GC of a node with no valid attachment left the reservation of %s for %s/%s", addr.Addr(), r.Spec.ContainerID, r.Spec.IfName)
	}
	if got := ippool(t, "r36gc-10.136.4.0-24").Spec.Allocations; len(got) != 0 {
		t.Errorf("GC of a node with no valid attachment left pool entries %v", got)
	}
	_ = a.del()
}

// TestReview36TornRecordWithAWholeTwinIsNotForgotten: a power cut on ext4 without a journal
// keeps the data a save synced but maybe not the names the swap changed. A save N writes
// version N into the twin's inode X, syncs it and swaps (record -> X, twin -> Y); the next
// save N+1 truncates Y, the twin as the process sees the directory. Cut there, with the swap
// of save N not on disk: the record's name is on Y, empty, and the twin's on X, which holds
// version N whole. The attachment (answered, its entry not in the pool yet) is taken for
// none: DEL finds nothing of it in the pool and frees nothing, and its reservation is held
// for good, although the node has its whole record, in the twin.
func TestReview36TornRecordWithAWholeTwinIsNotForgotten(t *testing.T) {
	const name, node = "r36torn", "node-r36t"
	conf, _, dir, x := answeredNotPooled(t, name, node, "10.136.1.0/24", "10.136.1.16/28", "c-r36t-x")
	// The power cut: version N whole in the twin, the record's name on the truncated inode.
	path := filepath.Join(dir, "c-r36t-x_net1")
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".tmp", whole, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}

	if _, err := runPlugin("DEL", conf, "c-r36t-x", node, podArgs("c-r36t-x")); err != nil {
		t.Fatal(err)
	}
	flusherGone(t, dir)
	eventually(t, func() error {
		if r, ok := reservation(t, cni.ReservationName(name, x)); ok {
			return fmt.Errorf("reservation of %s left for %s after its DEL (the node's twin held its record whole)", x, r.Spec.ContainerID)
		}
		return nil
	})
}

// TestReview36InterfaceNamesOneRecordApart: safeName writes ".." as "__", so interfaces
// "n..1" and "n__1" of one pod (both let through by the runtime's check) share one record
// file, and e84747e's check that a record is its attachment's compares the file's name, which
// matches for both. The second ADD takes the first's record for its own: its pool entry is
// written under the first's name, and the first's DEL then frees the second's address (pool
// entry and reservation) while the second still uses it, and forgets its own.
func TestReview36InterfaceNamesOneRecordApart(t *testing.T) {
	const name, node = "r36dots", "node-r36d"
	t.Setenv("NODENAME", node)
	slicePool(t, name, "10.136.5.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.136.5.16/28"})
	slice, pool := netip.MustParsePrefix("10.136.5.16/28"), "r36dots-node-r36d-10.136.5.16-28"
	conf := netConf("1.1.0", name, `"range":"10.136.5.0/24","node_slice_size":"/28"`)
	dots := attachment{conf: conf, container: "c-r36d", ifName: "n..1", pod: "r36d"}
	unders := attachment{conf: conf, container: "c-r36d", ifName: "n__1", pod: "r36d"}
	for _, a := range []attachment{dots, unders} {
		if err := utils.ValidateInterfaceName(a.ifName); err != nil {
			t.Fatalf("the runtime's check refuses %q: %v", a.ifName, err)
		}
	}
	first := netip.MustParsePrefix(addrs(dots.mustAdd(t))[0]).Addr()
	second := netip.MustParsePrefix(addrs(unders.mustAdd(t))[0]).Addr()
	if first == second {
		t.Fatalf("interfaces %q and %q of one pod were both given %s", dots.ifName, unders.ifName, first)
	}
	poolEntry(t, pool, slice, first, "c-r36d")
	poolEntry(t, pool, slice, second, "c-r36d")
	if err := dots.del(); err != nil {
		t.Fatal(err)
	}
	flusherGone(t, netDir(t, node, name))
	if a, ok := ippool(t, pool).Spec.Allocations[cni.Offset(slice, second)]; !ok || a.IfName != unders.ifName {
		t.Errorf("after the DEL of %q, the pool entry of %q's %s is %+v (present: %v)", dots.ifName, unders.ifName, second, a, ok)
	}
	if r, ok := reservation(t, cni.ReservationName(name, second)); !ok {
		t.Errorf("after the DEL of %q, the reservation of %q's live %s is gone", dots.ifName, unders.ifName, second)
	} else if r.Spec.IfName != unders.ifName {
		t.Errorf("the reservation of %s is %q's, want %q's", second, r.Spec.IfName, unders.ifName)
	}
	if r, ok := reservation(t, cni.ReservationName(name, first)); ok {
		t.Errorf("after the DEL of %q, its reservation of %s is left (%s/%s)", dots.ifName, first, r.Spec.ContainerID, r.Spec.IfName)
	}
	_ = unders.del()
}

// TestReview36SpareStillNamedByALiveRecord: a spare is taken out of .spare by a rename and
// written over in place. On ext4 without a journal a power cut can keep a rename's new name
// and lose the removal of its old one in another directory (e2fsck then counts both names):
// a live attachment's record, made from a spare moved out of .spare, is then also still a
// spare. The next attachment's first save moves that spare into its twin and truncates and
// writes it: the live attachment's record now reads as the other's, is taken for none, and
// its DEL forgets the address it holds (here still to be written to the pool): its
// reservation is held for good. A new inode per save could not be written over so.
func TestReview36SpareStillNamedByALiveRecord(t *testing.T) {
	const name, node = "r36spare", "node-r36s"
	conf, pool, dir, y := answeredNotPooled(t, name, node, "10.136.6.0/24", "10.136.6.16/28", "c-r36s-y")
	// The power cut: y's record still named in .spare as the spare it was made from.
	spares := filepath.Join(dir, ".spare")
	if err := os.MkdirAll(spares, 0o700); err != nil {
		t.Fatal(err)
	}
	des, _ := os.ReadDir(spares)
	for _, de := range des {
		_ = os.Remove(filepath.Join(spares, de.Name()))
	}
	if err := os.Link(filepath.Join(dir, "c-r36s-y_net1"), filepath.Join(spares, "c-r36s-gone_net1")); err != nil {
		t.Fatal(err)
	}

	z := addProcess(t, conf, node, "c-r36s-z")
	flusherGone(t, dir)
	for _, id := range []string{"c-r36s-y", "c-r36s-z"} {
		if _, err := runPlugin("DEL", conf, id, node, podArgs(id)); err != nil {
			t.Fatal(err)
		}
	}
	flusherGone(t, dir)
	eventually(t, func() error {
		for _, a := range []netip.Addr{y, z} {
			if r, ok := reservation(t, cni.ReservationName(name, a)); ok {
				return fmt.Errorf("reservation of %s left for %s after its DEL", a, r.Spec.ContainerID)
			}
		}
		if got := ippool(t, pool).Spec.Allocations; len(got) != 0 {
			return fmt.Errorf("pool entries left after every DEL: %v", got)
		}
		return nil
	})
}

// recordsOf counts the records in dir of container's interface ifName, whatever their file
// names.
func recordsOf(t *testing.T, dir, container, ifName string) int {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, de := range des {
		// Twins (<record>.tmp) hold a record's last version but one.
		if de.IsDir() || strings.HasPrefix(de.Name(), ".") || strings.HasSuffix(de.Name(), ".tmp") {
			continue
		}
		rec := map[string]any{}
		if b, err := os.ReadFile(filepath.Join(dir, de.Name())); err == nil && json.Unmarshal(b, &rec) == nil &&
			rec["containerID"] == container && rec["ifName"] == ifName {
			n++
		}
	}
	return n
}

// answeredNotPooled adds pod id on node to network name (range rng, the node's slice sl) and
// puts the node back as the ADD left it when it answered: the address reserved and pending,
// not in the pool yet.
func answeredNotPooled(t *testing.T, name, node, rng, sl, id string) (conf []byte, pool, dir string, a netip.Addr) {
	t.Helper()
	slicePool(t, name, rng, "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: sl})
	slice := netip.MustParsePrefix(sl)
	pool = name + "-" + node + "-" + strings.ReplaceAll(sl, "/", "-")
	conf = netConf("1.1.0", name, fmt.Sprintf(`"range":%q,"node_slice_size":"/28"`, rng))
	a = addProcess(t, conf, node, id)
	poolEntry(t, pool, slice, a, id)
	dir = netDir(t, node, name)
	flusherGone(t, dir)
	p := ippool(t, pool)
	delete(p.Spec.Allocations, cni.Offset(slice, a))
	if err := k8s.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	markPendingAgain(t, dir, id, false)
	return conf, pool, dir, a
}

// holdFlusher keeps any flusher of dir from starting until release is called (at the test's
// end at the latest).
func holdFlusher(t *testing.T, dir string) (release func()) {
	t.Helper()
	open, ok := cni.HoldFlusherProbe(dir)
	if !ok {
		t.Fatal("a flusher runs")
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(open) })
	return func() { once.Do(open) }
}
