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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sweeping runs sweep over and over, as a flusher's once a minute would meet a save at any
// moment, until the test ends.
func sweeping(t *testing.T, sweep func()) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				sweep()
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
}

// olderSweep is an older plugin's removeStaleTemps: every .tmp file older than staleTemp
// goes, a live record's twin too (that version knew no twins).
func olderSweep(dir string) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".tmp") {
			continue
		}
		if info, err := de.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}

// TestSaveOutlivesTheSweep: the flusher's sweep runs without the node's lock, and judges a
// twin by its name and age before it removes it. A first save writes into a spare moved in
// as the twin, as old as its last write, of a record not there yet: a sweep that judged it
// before the save opened it and removed it after took what the save wrote. Neither that, nor
// an older plugin's sweep taking an old twin of a live record, may fail the save (and the
// verb with it): the record is the one saved.
func TestSaveOutlivesTheSweep(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	t.Run("first save into a spare", func(t *testing.T) {
		st := &state{dir: t.TempDir()}
		if err := os.Mkdir(st.spareDir(), 0o700); err != nil {
			t.Fatal(err)
		}
		sweeping(t, st.removeStaleTemps)
		for i := range 500 {
			spare := filepath.Join(st.spareDir(), "s")
			if err := os.WriteFile(spare, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(spare, old, old); err != nil {
				t.Fatal(err)
			}
			c := fmt.Sprintf("c%d", i)
			if err := st.save(&record{ContainerID: c, IfName: "net1", Gen: c}); err != nil {
				t.Fatalf("save %d: %v", i, err)
			}
			if got, err := st.load(c, "net1"); err != nil || got == nil || got.Gen != c {
				t.Fatalf("save %d: loaded %+v, %v", i, got, err)
			}
			if err := os.Remove(st.path(c, "net1")); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("old twin under an older plugin's sweep", func(t *testing.T) {
		st := &state{dir: t.TempDir()}
		for _, gen := range []string{"0", "1"} {
			if err := st.save(&record{ContainerID: "c", IfName: "net1", Gen: gen}); err != nil {
				t.Fatal(err)
			}
		}
		sweeping(t, func() { olderSweep(st.dir) })
		for i := range 500 {
			// A pod's record rests between its ADD and its DEL: its twin is as old.
			_ = os.Chtimes(twin(st.path("c", "net1")), old, old)
			gen := fmt.Sprint(i + 2)
			if err := st.save(&record{ContainerID: "c", IfName: "net1", Gen: gen}); err != nil {
				t.Fatalf("save %d: %v", i, err)
			}
			if got, err := st.load("c", "net1"); err != nil || got == nil || got.Gen != gen {
				t.Fatalf("save %d: loaded %+v, %v", i, got, err)
			}
		}
	})
}
