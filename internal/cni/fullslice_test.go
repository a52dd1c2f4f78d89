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
	"fmt"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestFullSliceAddWaitsForAnEntryBeingWritten: the flusher is writing c-fs-x's pool entry when
// c-fs-x has its DEL (written behind), and an ADD finds the slice full and carries out the
// node's waiting DELs itself (c-fs-x's and c-fs-z's). It must wait for the write of c-fs-x's
// entry before it releases c-fs-x: released before, the entry lands after the release, held
// by no record and no reservation, and stays in the pool.
func TestFullSliceAddWaitsForAnEntryBeingWritten(t *testing.T) {
	const name, node = "fullslice", "node-fs"
	// Six addresses: c-fs-z takes the lowest, four more the next, c-fs-x the last.
	ids := []string{"c-fs-z", "c-fs-1", "c-fs-2", "c-fs-3", "c-fs-4"}
	fs := fillSlice(t, name, node, "10.84.1.0/24", "10.84.1.8/29", ids, "c-fs-x")
	conf, pool, slice, dir, g, x := fs.conf, fs.pool, fs.slice, fs.dir, fs.g, fs.x
	for _, id := range []string{"c-fs-z", "c-fs-x"} {
		if _, err := runPlugin("DEL", conf, id, node, podArgs(id)); err != nil {
			t.Fatal(err)
		}
	}
	// The full-slice ADD has carried out the DELs (or waits for the flusher) by the time it
	// looks for a flusher: only then does the gate let the write of c-fs-x's entry go on.
	probed := whenOpened(t, filepath.Join(dir, ".flusher"))
	y := startPlugin(t, "ADD", conf, "c-fs-y", node, podArgs("c-fs-y"))
	waitOpened(t, probed, "the full-slice ADD's look for a flusher")
	g.open()
	if err := y.wait(t); err != nil {
		t.Fatalf("ADD in a full slice: %v", err)
	}
	flusherGone(t, dir)
	recordGone(t, dir, "c-fs-x")
	if got := ippool(t, pool).Spec.Allocations[cni.Offset(slice, x)]; got.ContainerID != "" {
		t.Errorf("pool entry of %s left for %s, released while its write was under way", x, got.ContainerID)
	}
	if o, ok := reservation(t, cni.ReservationName(name, x)); ok {
		t.Errorf("reservation of %s left for %s", x, o.Spec.ContainerID)
	}
	delAll(t, conf, node, dir, pool, append(ids[1:], "c-fs-y")...)
}

// fullSlice is a node's /29 slice with six attachments, the last one's pool entry being
// written: the flusher's PATCH of the pool is held at g.
type fullSlice struct {
	conf      []byte
	pool, dir string
	slice     netip.Prefix
	g         *gate
	x         netip.Addr // the last attachment's address
	held      map[string]netip.Addr
}

// fillSlice fills node's slice sl of network name (range rng) with ids, their pool entries
// written, then adds x through a gate that holds the flusher's write of x's entry.
func fillSlice(t *testing.T, name, node, rng, sl string, ids []string, x string) fullSlice {
	t.Helper()
	slicePool(t, name, rng, "/29", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: sl})
	fs := fullSlice{slice: netip.MustParsePrefix(sl), held: map[string]netip.Addr{},
		pool: name + "-" + node + "-" + strings.ReplaceAll(sl, "/", "-"),
		conf: netConf("1.1.0", name, fmt.Sprintf(`"range":%q,"node_slice_size":"/29"`, rng))}
	for _, id := range ids {
		fs.held[id] = addProcess(t, fs.conf, node, id)
	}
	for _, id := range ids {
		poolEntry(t, fs.pool, fs.slice, fs.held[id], id)
	}
	fs.dir = netDir(t, node, name)
	flusherGone(t, fs.dir)
	fs.g = newGate(t, func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/ippools/"+fs.pool)
	})
	fs.x = addProcess(t, fs.g.through(fs.conf), node, x)
	fs.g.waitHeld(t)
	return fs
}

// podArgs are the CNI_ARGS of pod id of namespace tenant.
func podArgs(id string) string { return "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=" + id }

// delAll sends DEL for each of ids and waits until the pool holds no entry.
func delAll(t *testing.T, conf []byte, node, dir, pool string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := runPlugin("DEL", conf, id, node, podArgs(id)); err != nil {
			t.Fatal(err)
		}
	}
	flusherGone(t, dir)
	eventually(t, func() error {
		if got := ippool(t, pool).Spec.Allocations; len(got) != 0 {
			return fmt.Errorf("pool entries left after every DEL: %v", got)
		}
		return nil
	})
}
