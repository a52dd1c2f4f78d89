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

package cni

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestWriteIfChangedConcurrently: writers of one file at once (the ADDs, DELs and flusher of a
// node write the same caches) all succeed, and the file ends up whole, as one of them wrote it.
func TestWriteIfChangedConcurrently(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".cache")
	contents := make([][]byte, 8)
	for i := range contents {
		contents[i] = bytes.Repeat([]byte{byte('a' + i)}, 64<<10)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(contents))
	for _, c := range contents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if err := writeIfChanged(path, c, 0o600); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := false
	for _, c := range contents {
		whole = whole || bytes.Equal(got, c)
	}
	if !whole {
		t.Errorf("the file holds %d bytes that no writer wrote whole", len(got))
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", info.Mode().Perm(), err)
	}
}

func TestIsTempFile(t *testing.T) {
	for name, want := range map[string]bool{
		"net-10.0.0.0-24":            false,
		"net-10.0.0.0-24.tmp":        true,
		"net-10.0.0.0-24.tmp-123456": true,
		"my.tmp-net-10.0.0.0-24":     false,
		"net-10.0.0.0-24.tmp-":       false,
		"net-10.0.0.0-24.tmp-12a":    false,
	} {
		if got := isTempFile(name); got != want {
			t.Errorf("isTempFile(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRemoveStaleTemps: the temporary files of writers killed before their rename go once
// they are old, and so does the twin of a record gone; a young one (a writer at work), the
// files themselves, records and their twins stay. Idle markers go with their records, and
// spares past maxSpares go.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".cache")
	st := &state{dir: dir}
	for _, d := range []string{st.idleDir(), st.spareDir()} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	stale := []string{path + ".tmp-111", path + ".tmp", filepath.Join(dir, ".claims.tmp-333"), filepath.Join(dir, "c2_net1.tmp"),
		filepath.Join(st.idleDir(), "c2_net1")}
	kept := []string{path, path + ".tmp-222", filepath.Join(dir, "c1_net1"), filepath.Join(dir, "c1_net1.tmp"), filepath.Join(dir, ".pool-net-10.0.0.0-24"),
		filepath.Join(st.idleDir(), "c1_net1")}
	for i := range maxSpares + 5 {
		if err := os.WriteFile(filepath.Join(st.spareDir(), fmt.Sprintf("c%d_net1", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range append(stale, kept...) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range append(stale, path, filepath.Join(dir, "c1_net1"), filepath.Join(dir, "c1_net1.tmp")) {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	st.removeStaleTemps()
	if spares, err := os.ReadDir(st.spareDir()); err != nil || len(spares) != maxSpares {
		t.Errorf("%d spares after the sweep, want %d: %v", len(spares), maxSpares, err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("stale temporary %s left: %v", filepath.Base(p), err)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}
