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

// TestReview37DelAfterTheUpgradeFindsARecordNowHashed: 325d585 names the record of an
// interface with "~" (or "..", or a ".tmp-<n>" end) <container>_<interface>~<hash>; the
// earlier version named it <container>_<interface>, and "x~1" shared that name with no other
// file. After the upgrade the record is no attachment's: the flusher drops its pending marker
// (it reads as "another attachment's"), so the entry the ADD answered is never written to the
// pool, and the DEL (the pod's, or KubeVirt's hot-unplug of that interface) finds no record
// and frees, by name, only what the pool holds: the reservation stays. The manager's reaper
// keeps a live pod's reservation that no pool entry records, so after a hot-unplug it is held
// for the VM's lifetime.
//
// The state is made by today's ADD with the record's files given the earlier version's
// names (their content is the same), and without the mark of a directory whose records are
// named as today.
func TestReview37DelAfterTheUpgradeFindsARecordNowHashed(t *testing.T) {
	const name, node, ifName = "r37hash", "node-r37h", "x~1"
	slicePool(t, name, "10.137.2.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.137.2.16/28"})
	slice, pool := netip.MustParsePrefix("10.137.2.16/28"), "r37hash-node-r37h-10.137.2.16-28"
	conf := netConf("1.1.0", name, `"range":"10.137.2.0/24","node_slice_size":"/28"`)
	if err := utils.ValidateInterfaceName(ifName); err != nil {
		t.Fatalf("the runtime's check refuses %q: %v", ifName, err)
	}
	o := addProcess(t, conf, node, "c-r37h-o")
	poolEntry(t, pool, slice, o, "c-r37h-o")
	dir := netDir(t, node, name)
	flusherGone(t, dir)

	// The earlier version's ADD answered; its entry waits for the flusher at the upgrade.
	release := holdFlusher(t, dir)
	x := addIf(t, conf, "c-r37h", ifName, node)
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	hashed := ""
	for _, de := range des {
		if strings.HasPrefix(de.Name(), "c-r37h_") && !strings.HasSuffix(de.Name(), ".tmp") {
			hashed = de.Name()
		}
	}
	earlier := "c-r37h_" + ifName
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
	if err := os.Remove(filepath.Join(dir, ".named")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	release()
	// Today's flusher, the first to look after the upgrade.
	if _, err := runPlugin("DEL", conf, "c-r37h-o", node, podArgs("c-r37h-o")); err != nil {
		t.Fatal(err)
	}
	flusherGone(t, dir)

	if _, err := runPluginIf("DEL", conf, "c-r37h", ifName, node, podArgs("c-r37h")); err != nil {
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
