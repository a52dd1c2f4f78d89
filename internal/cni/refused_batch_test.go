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
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// entryOf is the first entry of container's record in dir (interface net1), as stored.
func entryOf(t *testing.T, dir, container string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, container+"_net1"))
	rec := map[string]any{}
	if err != nil || json.Unmarshal(b, &rec) != nil {
		t.Fatalf("record of %s: %v %s", container, err, b)
	}
	es, _ := rec["entries"].([]any)
	if len(es) == 0 {
		t.Fatalf("record of %s has no entry: %s", container, b)
	}
	return es[0].(map[string]any)
}

// TestRefusedBatchWithoutItsReadBlamesNoEntry: the flusher writes two attachments' entries in
// one patch, which the apiserver refuses because of one of them (c-refused), and the read of
// the pool that would tell which fails. The other attachment (c-rb-ok) was refused for
// nothing of its own: CHECK of it passes, and once the pool can be read it is written alone,
// while c-refused carries its own refusal.
func TestRefusedBatchWithoutItsReadBlamesNoEntry(t *testing.T) {
	const name, node = "refusedbatch", "node-rb"
	t.Setenv("NODENAME", node)
	slicePool(t, name, "10.84.2.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.84.2.16/28"})
	slice, pool := netip.MustParsePrefix("10.84.2.16/28"), name+"-"+node+"-10.84.2.16-28"
	conf := netConf("1.1.0", name, `"range":"10.84.2.0/24","node_slice_size":"/28"`)
	// A first attachment makes the pool and the node's directory.
	first := addProcess(t, conf, node, "c-rb-0")
	poolEntry(t, pool, slice, first, "c-rb-0")
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	lift := refusePodInPools(t)
	// No flusher while both ADDs run: the test holds the flusher lock, as a running one does.
	lock, err := os.OpenFile(filepath.Join(dir, ".flusher"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Close() }()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	ok := addProcess(t, conf, node, "c-rb-ok")
	refused := addProcess(t, conf, node, "c-refused")
	// Both entries are due at once, so the flusher writes them in one patch.
	long := time.Now().Add(-time.Minute)
	for _, id := range []string{"c-rb-ok", "c-refused"} {
		if err := os.Chtimes(filepath.Join(dir, ".pending", id+"_net1"), long, long); err != nil {
			t.Fatal(err)
		}
	}
	// The flusher's reads of the pool fail (its identity may not read it) until unblocked.
	var blind atomic.Bool
	blind.Store(true)
	kc := newProxy(t, func(w http.ResponseWriter, r *http.Request, forward http.Handler) {
		if blind.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/ippools/"+pool) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"ippools %q is forbidden"}`, pool)
			return
		}
		forward.ServeHTTP(w, r)
	})
	fc, err := json.Marshal(map[string]any{"config": json.RawMessage(bytes.ReplaceAll(conf, []byte(strconv.Quote(kubeconfig)), []byte(strconv.Quote(kc)))), "node": node})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".flusher.json"), fc, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	flusher := exec.Command(plugin, "flush", dir)
	if err := flusher.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- flusher.Wait() }()
	eventually(t, func() error {
		if tries, _ := entryOf(t, dir, "c-rb-ok")["tries"].(float64); tries < 1 {
			return fmt.Errorf("the flusher has not tried c-rb-ok's entry yet")
		}
		return nil
	})
	if err := checkOf(t, conf, "c-rb-ok", ok); err != nil {
		t.Errorf("CHECK of c-rb-ok, refused only in a batch with c-refused: %v", err)
	}
	blind.Store(false)
	poolEntry(t, pool, slice, ok, "c-rb-ok")
	if err := checkOf(t, conf, "c-rb-ok", ok); err != nil {
		t.Errorf("CHECK of c-rb-ok, written: %v", err)
	}
	eventually(t, func() error {
		err := checkOf(t, conf, "c-refused", refused)
		if err == nil || !strings.Contains(err.Error(), refusedMessage) {
			return fmt.Errorf("CHECK of c-refused does not name its refusal: %v", err)
		}
		return nil
	})
	if evs := refusalEvents(t, "c-rb-ok", pool); len(evs) != 0 {
		t.Errorf("c-rb-ok, refused only in a batch with c-refused, had Events: %+v", evs)
	}
	lift()
	poolEntry(t, pool, slice, refused, "c-refused")
	<-exited
	delAll(t, conf, node, dir, pool, "c-rb-0", "c-rb-ok", "c-refused")
}
