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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/utils"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestReview38RecordAnOlderPluginWritesAfterTheMoveIsFound: renameOldRecords moves the
// earlier naming's records once a directory, and .named then stops every later look. In a
// rolling upgrade an ADD of the earlier binary that started before the binary was replaced
// (queued on the node's lock behind today's verb that made .named), or an earlier flusher
// still running, writes <container>_<interface> after .named exists: that record is never
// moved, its pending marker is dropped by today's flusher, and its DEL leaves the reservation.
func TestReview38RecordAnOlderPluginWritesAfterTheMoveIsFound(t *testing.T) {
	const name, node, ifName = "r38late", "node-r38l", "x~1"
	slicePool(t, name, "10.138.2.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.138.2.16/28"})
	slice, pool := netip.MustParsePrefix("10.138.2.16/28"), "r38late-node-r38l-10.138.2.16-28"
	conf := netConf("1.1.0", name, `"range":"10.138.2.0/24","node_slice_size":"/28"`)
	if err := utils.ValidateInterfaceName(ifName); err != nil {
		t.Fatalf("the runtime's check refuses %q: %v", ifName, err)
	}
	o := addProcess(t, conf, node, "c-r38l-o")
	poolEntry(t, pool, slice, o, "c-r38l-o")
	dir := netDir(t, node, name)
	flusherGone(t, dir)

	// The earlier version's ADD answered; its entry waits for the flusher at the upgrade.
	release, ok := cni.HoldFlusherProbe(dir)
	if !ok {
		t.Fatal("a flusher runs")
	}
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	x := addIf(t, conf, "c-r38l", ifName, node)
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	hashed := ""
	for _, de := range des {
		if strings.HasPrefix(de.Name(), "c-r38l_") && !strings.HasSuffix(de.Name(), ".tmp") {
			hashed = de.Name()
		}
	}
	earlier := "c-r38l_" + ifName
	if hashed == "" {
		t.Fatalf("no record of %q in %s", ifName, dir)
	}
	for _, p := range [][2]string{
		{filepath.Join(dir, hashed+".tmp"), filepath.Join(dir, earlier+".tmp")},
		{filepath.Join(dir, ".pending", hashed), filepath.Join(dir, ".pending", earlier)},
		{filepath.Join(dir, hashed), filepath.Join(dir, earlier)},
	} {
		if p[0] == p[1] {
			continue // named as before 325d585 already
		}
		if err := os.Rename(p[0], p[1]); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	// .named stays: the directory was moved by today's first verb, and an ADD of the earlier
	// binary (started before the upgrade, queued on the node's lock) saved its record after.
	if _, err := os.Lstat(filepath.Join(dir, ".named")); err != nil {
		t.Fatalf("the directory is not marked moved: %v", err)
	}
	release()
	released = true
	// Today's flusher, the first to look after the upgrade.
	if _, err := runPlugin("DEL", conf, "c-r38l-o", node, podArgs("c-r38l-o")); err != nil {
		t.Fatal(err)
	}
	flusherGone(t, dir)

	if _, err := runPluginIf("DEL", conf, "c-r38l", ifName, node, podArgs("c-r38l")); err != nil {
		t.Fatal(err)
	}
	flusherGone(t, dir)
	if r, ok := reservation(t, cni.ReservationName(name, x)); ok {
		t.Errorf("after the DEL of %q, the reservation of %s is still %s/%q's (pool entry present: %v)",
			ifName, x, r.Spec.ContainerID, r.Spec.IfName, ippool(t, pool).Spec.Allocations[cni.Offset(slice, x)].ContainerID != "")
	}
	if _, err := os.Stat(filepath.Join(dir, earlier)); err == nil {
		t.Errorf("after the DEL of %q, its record %s is still on the node", ifName, earlier)
	}
}


// TestReview38AnUnmovableRecordDoesNotRescanAtEveryLock: a record the earlier version named
// <container>_<interface> near the file-name limit (255 bytes) has a hashed name 17 bytes
// longer, and a twin 4 more: its save fails (ENAMETOOLONG) at each try, renameOldRecords
// returns before it makes .named, and every verb of the network on the node (each ADD, DEL,
// CHECK and flusher pass) reads the whole directory and every record in it, under the
// node's lock, for good.
func TestReview38AnUnmovableRecordDoesNotRescanAtEveryLock(t *testing.T) {
	const name, node = "r38long", "node-r38g"
	slicePool(t, name, "10.138.6.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.138.6.16/28"})
	conf := netConf("1.1.0", name, `"range":"10.138.6.0/24","node_slice_size":"/28"`)
	addProcess(t, conf, node, "c-r38g-o")
	dir := netDir(t, node, name)
	flusherGone(t, dir)

	// The earlier version's record of a container whose ID is 240 bytes, interface "n..1".
	cid := "c" + strings.Repeat("0", 239)
	old := cid + "_n__1"
	if err := os.WriteFile(filepath.Join(dir, old), []byte(`{"containerID":"`+cid+`","ifName":"n..1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ".named")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if _, err := runPlugin("DEL", conf, "c-r38g-o", node, podArgs("c-r38g-o")); err != nil {
		t.Fatal(err)
	}
	flusherGone(t, dir)
	if _, err := os.Lstat(filepath.Join(dir, ".named")); err != nil {
		t.Errorf("after a verb, the directory is still not marked moved (%v): each Lock reads every record", err)
	}
}
