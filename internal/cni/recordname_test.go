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
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A record's file name is one element, no other file of the directory (a twin, a temporary
// file the sweep removes, a dot-file), and no other attachment's.
func checkRecordName(t *testing.T, cid, ifName string) string {
	t.Helper()
	n := recordName(cid, ifName)
	if n == "" || strings.ContainsAny(n, "/\x00") || n == "." || n == ".." || strings.HasPrefix(n, ".") || isTempFile(n) {
		t.Fatalf("record name %q of (%q, %q) is no record's", n, cid, ifName)
	}
	return n
}

func TestRecordName(t *testing.T) {
	for _, tc := range []struct{ cid, a, b string }{
		{"c1", "n..1", "n__1"},
		{"c1", "n", "n.tmp"},
		{"c1", "x.tmp-1", "x"},
		{"c1", "a/b", "a_b"},
		{"c1", "a\x00b", "a_b"},
		{"c1", "", "_"},
		{"c1", "n~0123456789abcdef", "n"},
		{"c1", "eth0", "net1"},
	} {
		if a, b := checkRecordName(t, tc.cid, tc.a), checkRecordName(t, tc.cid, tc.b); a == b {
			t.Errorf("interfaces %q and %q of %s share the record file %q", tc.a, tc.b, tc.cid, a)
		}
	}
	if got := recordName("0123abcd", "net1"); got != "0123abcd_net1" {
		t.Errorf("a plain attachment's record is %q, want the name of earlier versions", got)
	}
}

func FuzzRecordName(f *testing.F) {
	f.Add("c1", "n..1", "n__1")
	f.Add("c1", "n", "n.tmp")
	f.Fuzz(func(t *testing.T, cid, a, b string) {
		if cid == "" || strings.ContainsAny(cid, "_") {
			// Container IDs are the runtime's, and "_" joins them to the interface.
			return
		}
		na, nb := checkRecordName(t, cid, a), checkRecordName(t, cid, b)
		if a != b && na == nb {
			t.Errorf("interfaces %q and %q of %s share the record file %q", a, b, cid, na)
		}
	})
}

// TestMoveKeepsTheNewerLife: a directory holds an attachment's record under the earlier
// plugin's name (a first life) and under its name now (a later life, made by a plugin that
// did not move the first). The move keeps the later record and adds the first's entries, so
// that the attachment's DEL frees both lives' addresses; the earlier name is gone.
func TestMoveKeepsTheNewerLife(t *testing.T) {
	s := &state{dir: t.TempDir()}
	const cid, ifName = "c1", "x~1"
	entryOf := func(a string) entry {
		return entry{Pool: "p", Range: "10.0.0.0/28", Address: a, Reservation: "net-" + a, Pending: true}
	}
	later := &record{ContainerID: cid, IfName: ifName, Gen: "g2", Entries: []entry{entryOf("10.0.0.2")}}
	if err := s.save(later); err != nil {
		t.Fatal(err)
	}
	first := &record{ContainerID: cid, IfName: ifName, Gen: "g1", Entries: []entry{entryOf("10.0.0.1")}}
	b, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	old := safeName(cid) + "_" + safeName(ifName)
	if err := os.WriteFile(filepath.Join(s.dir, old), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Lock(); err != nil {
		t.Fatal(err)
	}
	defer s.Unlock()
	got, err := s.load(cid, ifName)
	if err != nil || got == nil {
		t.Fatalf("load: %v %v", got, err)
	}
	var addrs []string
	for _, e := range got.Entries {
		addrs = append(addrs, e.Address)
	}
	if got.Gen != "g2" || !slices.Contains(addrs, "10.0.0.1") || !slices.Contains(addrs, "10.0.0.2") {
		t.Errorf("after the move the record is of life %s with %v, want life g2 with both lives' addresses", got.Gen, addrs)
	}
	if _, err := os.Lstat(filepath.Join(s.dir, old)); !os.IsNotExist(err) {
		t.Errorf("the record under the earlier name %s is still there (%v)", old, err)
	}
}
