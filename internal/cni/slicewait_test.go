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
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestAStuckSliceReadHoldsNoOtherVerb: a node's first ADD whose read of the NodeSlicePool
// hangs (here for the 10 s its request is given: the request lost, the apiserver slow to
// answer that one connection) holds the node's slice lock meanwhile. An ADD behind it waits
// for that read only for a while, then reads the slice itself, and answers with an address
// within its own, shorter, timeout. A DEL that finds no record (the kubelet's DEL after a
// failed ADD) reads the slice holding the node's lock: it must not wait behind that read at
// all, or the ADD would then wait behind the DEL, at the node's lock, past its timeout.
func TestAStuckSliceReadHoldsNoOtherVerb(t *testing.T) {
	slice := netip.MustParsePrefix("10.79.0.32/27")
	slicePool(t, "slicewait", "10.79.0.0/24", "/27", wbv1.NodeSliceAllocation{NodeName: "node-sw", SliceRange: slice.String()})
	g := newGate(t, func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/nodeslicepools/")
	})
	holder := startPlugin(t, "ADD", g.through(netConf("1.1.0", "slicewait", `"range":"10.79.0.0/24","node_slice_size":"/27"`)),
		"c-sw-first", "node-sw", podArgs("c-sw-first"))
	g.waitHeld(t)
	// A DEL of an attachment the node has no record of comes next: it takes the node's lock
	// (the test learns so when it opens the lock's file) and reads the slice.
	lockFile := filepath.Join(netDir(t, "node-sw", "slicewait"), ".lock")
	if f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600); err != nil {
		t.Fatal(err)
	} else {
		_ = f.Close()
	}
	locked := whenOpened(t, lockFile)
	conf := netConf("1.1.0", "slicewait", `"range":"10.79.0.0/24","node_slice_size":"/27"`)
	del := startPlugin(t, "DEL", conf, "c-sw-never-added", "node-sw", podArgs("c-sw-never-added"))
	waitOpened(t, locked, "the DEL's node lock")
	// Then an ADD of the same network and node (the state directory is keyed by the pools,
	// not the timeout), with a timeout well under the held read's.
	short := netConf("1.1.0", "slicewait", `"range":"10.79.0.0/24","node_slice_size":"/27","timeout":"6s"`)
	add := startPlugin(t, "ADD", short, "c-sw-second", "node-sw", podArgs("c-sw-second"))
	addErr, delErr := add.wait(t), del.wait(t)
	g.open()
	if err := holder.wait(t); err != nil {
		t.Fatalf("the first ADD, its read let through: %v", err)
	}
	if delErr != nil {
		t.Errorf("a DEL without a record, while another ADD's slice read hung: %v", delErr)
	}
	if addErr != nil {
		t.Fatalf("an ADD behind another's hung slice read: %v", addErr)
	}
	got := map[netip.Addr]string{}
	for id, p := range map[string]*started{"c-sw-first": holder, "c-sw-second": add} {
		r := &current.Result{}
		if err := json.Unmarshal(p.out.Bytes(), r); err != nil || len(r.IPs) != 1 {
			t.Fatalf("ADD %s result %s: %v", id, p.out.String(), err)
		}
		a, _ := netip.AddrFromSlice(r.IPs[0].Address.IP)
		a = a.Unmap()
		if !slice.Contains(a) || got[a] != "" {
			t.Fatalf("ADD %s got %s (others: %v): want a distinct address of %s", id, a, got, slice)
		}
		got[a] = id
	}
}
