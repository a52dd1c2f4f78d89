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
	"strings"
	"sync"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestBurstOfAddsStartsOneFlusher: ADDs that end at once on a node start one flusher between
// them. Each used to find the flusher lock free while the first flusher was still starting,
// and started its own: every extra one read its configuration and the apiserver, then waited.
// The flusher's pool write is held at a gate until the burst is over: no flusher can go idle
// and exit meanwhile, and every one the ADDs started is still there to be counted.
func TestBurstOfAddsStartsOneFlusher(t *testing.T) {
	const name, node, burst = "onefl", "node-onefl", 16
	slicePool(t, name, "10.85.0.0/24", "/26", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.85.0.0/26"})
	pool := name + "-" + node + "-10.85.0.0-26"
	conf := netConf("1.1.0", name, `"range":"10.85.0.0/24","node_slice_size":"/26"`)
	addProcess(t, conf, node, "c-onefl-0") // makes the state directory and the pool
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	g := newGate(t, func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/ippools/"+pool)
	})
	var wg sync.WaitGroup
	errs := make(chan error, burst)
	for i := 1; i <= burst; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("c-onefl-%d", i)
			if _, err := runPlugin("ADD", g.through(conf), id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	g.waitHeld(t)
	// Every ADD has exited, and a started process has exec'd before its starter goes on.
	if pids := flusherProcesses(dir); len(pids) != 1 {
		t.Errorf("flusher processes %v for one node's burst of %d ADDs, want one", pids, burst)
	}
	g.open()
	for i := 0; i <= burst; i++ {
		id := fmt.Sprintf("c-onefl-%d", i)
		if _, err := runPlugin("DEL", conf, id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
			t.Fatal(err)
		}
	}
	flusherGone(t, dir)
}
