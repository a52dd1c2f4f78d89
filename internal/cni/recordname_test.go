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
	if a, b := checkRecordName(t, "a_b", "c"), checkRecordName(t, "a", "b_c"); a == b {
		t.Errorf("attachments (a_b, c) and (a, b_c) share the record file %q", a)
	}
	if got := recordName("0123abcd", "net1"); got != "0123abcd_net1" {
		t.Errorf("a plain attachment's record is %q, want the name of earlier versions", got)
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
