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
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Ino
}

// TestAttachmentFilesAreReused: a record's saves, its markers and the next attachment's files
// write over inodes the node already has, instead of taking a new one (and freeing the old)
// at every step; each save still replaces the record whole.
func TestAttachmentFilesAreReused(t *testing.T) {
	st := &state{dir: t.TempDir()}
	id := func(c string) (rec, marker, idle string) {
		rec = st.path(c, "net1")
		return rec, filepath.Join(st.pendingDir(), filepath.Base(rec)), filepath.Join(st.idleDir(), filepath.Base(rec))
	}
	save := func(c, addr string) {
		t.Helper()
		if err := st.save(&record{ContainerID: c, IfName: "net1", Entries: []entry{{Address: addr}}}); err != nil {
			t.Fatal(err)
		}
		if got, err := st.load(c, "net1"); err != nil || got == nil || got.Entries[0].Address != addr {
			t.Fatalf("loaded %+v, %v after saving %s", got, err, addr)
		}
	}
	rec, marker, idle := id("c1")
	save("c1", "10.0.0.1")
	first := inode(t, rec)
	save("c1", "10.0.0.2")
	if _, err := os.Lstat(twin(rec)); err != nil {
		t.Fatalf("no twin after the second save: %v", err)
	}
	if inode(t, twin(rec)) != first || inode(t, rec) == first {
		t.Errorf("second save: the twin is inode %d and the record %d, want the first record's (%d) kept as the twin", inode(t, twin(rec)), inode(t, rec), first)
	}
	second := inode(t, rec)
	save("c1", "10.0.0.3")
	if inode(t, rec) != first || inode(t, twin(rec)) != second {
		t.Errorf("third save took a new inode: record %d, twin %d, want %d and %d", inode(t, rec), inode(t, twin(rec)), first, second)
	}
	if err := st.markPending("c1", "net1"); err != nil {
		t.Fatal(err)
	}
	m := inode(t, marker)
	st.unmarkPending(&record{ContainerID: "c1", IfName: "net1"})
	if _, err := os.Lstat(marker); !os.IsNotExist(err) {
		t.Errorf("pending marker left after unmark: %v", err)
	}
	if inode(t, idle) != m {
		t.Errorf("the idle marker is inode %d, want the pending one's %d", inode(t, idle), m)
	}
	if err := st.markPending("c1", "net1"); err != nil {
		t.Fatal(err)
	}
	if inode(t, marker) != m {
		t.Errorf("marked again as inode %d, want %d", inode(t, marker), m)
	}
	if err := st.remove("c1", "net1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{rec, twin(rec), marker, idle} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after remove: %v", p, err)
		}
	}
	spares := map[uint64]bool{}
	des, err := os.ReadDir(st.spareDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		spares[inode(t, filepath.Join(st.spareDir(), de.Name()))] = true
	}
	if len(spares) != 3 || !spares[first] || !spares[second] || !spares[m] {
		t.Fatalf("spares %v, want the record's, its twin's and its marker's (%d %d %d)", spares, first, second, m)
	}
	rec2, marker2, _ := id("c2")
	save("c2", "10.0.0.9")
	save("c2", "10.0.0.10")
	if err := st.markPending("c2", "net1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{rec2, twin(rec2), marker2} {
		if !spares[inode(t, p)] {
			t.Errorf("%s is a new inode, not a spare", filepath.Base(p))
		}
	}
}
