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
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// A record's file name is one element, no other file of the directory (a twin, a temporary
// file the sweep removes, a dot-file), and no other attachment's.
func checkRecordName(t *testing.T, cid, ifName string) string {
	t.Helper()
	n := recordName(cid, ifName)
	if n == "" || strings.ContainsAny(n, "/\x00") || n == "." || n == ".." || strings.HasPrefix(n, ".") || isTempFile(n) || len(n) > recordNameMax {
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
	if a, b := checkRecordName(t, "a_b", "c"), checkRecordName(t, "a", "b_c"); a == b {
		t.Errorf("attachments (a_b, c) and (a, b_c) share the record file %q", a)
	}
	if got := recordName("0123abcd", "net1"); got != "0123abcd_net1" {
		t.Errorf("a plain attachment's record is %q, want the name of earlier versions", got)
	}
}

// TestLongRecordNames: a name that no record could have had (its twin would be longer than a
// file name may be) is cut and hashed, still UTF-8 and told apart from its kin; one that
// fits stays as earlier versions named it, so their records are found.
func TestLongRecordNames(t *testing.T) {
	long := strings.Repeat("c", 250)
	seen := map[string]string{}
	for _, cid := range []string{long, long + "d", long + "_e", "a" + strings.Repeat("é", 200), strings.Repeat("f", 4000)} {
		n := checkRecordName(t, cid, "net1")
		if len(n) > recordNameMax || !utf8.ValidString(n) {
			t.Errorf("record name of a %d-byte container ID: %d bytes, UTF-8 %v", len(cid), len(n), utf8.ValidString(n))
		}
		if other, ok := seen[n]; ok {
			t.Errorf("container IDs of %d and %d bytes share the record name %q", len(cid), len(other), n)
		}
		seen[n] = cid
	}
	fits := strings.Repeat("c", recordNameMax-len("_net1"))
	if got := recordName(fits, "net1"); got != fits+"_net1" {
		t.Errorf("a record name of %d bytes was changed to %q", recordNameMax, got)
	}
}

// TestLongOldRecordIsMoved: a record of the earlier naming whose new, hashed name would be
// longer than a file name may be is moved, and the directory marked as moved: unmoved, it was
// read again at every lock, and its DEL found nothing.
func TestLongOldRecordIsMoved(t *testing.T) {
	s := &state{dir: t.TempDir()}
	cid := strings.Repeat("c", 236) + "_x" // "_" makes the new name hashed
	r := &record{ContainerID: cid, IfName: "net1", Entries: []entry{{Pool: "p", Address: "10.0.0.1"}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	old := safeName(cid) + "_net1"
	if err := os.WriteFile(filepath.Join(s.dir, old), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if len(old)+17 <= recordNameMax {
		t.Fatalf("the old name (%d bytes) hashed fits: the test needs a longer one", len(old))
	}
	if err := s.Lock(); err != nil {
		t.Fatal(err)
	}
	defer s.Unlock()
	if _, err := os.Lstat(filepath.Join(s.dir, namedMarker)); err != nil {
		t.Fatalf("the directory is not marked as moved: %v", err)
	}
	got, err := s.load(cid, "net1")
	if err != nil || got == nil || len(got.Entries) != 1 {
		t.Fatalf("the moved record: %+v, %v", got, err)
	}
	if _, err := os.Lstat(filepath.Join(s.dir, old)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old record is still there: %v", err)
	}
}

func FuzzRecordName(f *testing.F) {
	f.Add("c1", "n..1", "c1", "n__1")
	f.Add("c1", "n", "c1", "n.tmp")
	f.Add("a_b", "c", "a", "b_c")
	f.Fuzz(func(t *testing.T, cid1, if1, cid2, if2 string) {
		n1, n2 := checkRecordName(t, cid1, if1), checkRecordName(t, cid2, if2)
		if (cid1 != cid2 || if1 != if2) && n1 == n2 {
			t.Errorf("attachments (%q, %q) and (%q, %q) share the record file %q", cid1, if1, cid2, if2, n1)
		}
	})
}
