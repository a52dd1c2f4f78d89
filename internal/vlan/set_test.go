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

package vlan

import (
	"slices"
	"testing"
)

func TestSetArithmetic(t *testing.T) {
	a, b := MustParse("1, 6-10, 100"), MustParse("8-12, 100, 4094")
	for _, tc := range []struct {
		name string
		got  Set
		want string
	}{
		{"union", a.Union(b), "1, 6-12, 100, 4094"},
		{"intersect", a.Intersect(b), "8-10, 100"},
		{"difference", a.Difference(b), "1, 6-7"},
		{"difference reversed", b.Difference(a), "11-12, 4094"},
		{"empty union", Set{}.Union(Set{}), ""},
	} {
		if tc.got.String() != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if a.String() != "1, 6-10, 100" {
		t.Error("operations changed their receiver")
	}
	for _, tc := range []struct {
		s, t           string
		subset, overlp bool
	}{
		{"", "", true, false},
		{"", "1-5", true, false},
		{"2-3", "1-5", true, true},
		{"1-5", "2-3", false, true},
		{"1-5", "1-5", true, true},
		{"1, 4094", "1-4094", true, true},
		{"6", "1-5, 7", false, false},
	} {
		s, u := MustParse(tc.s), MustParse(tc.t)
		if s.SubsetOf(u) != tc.subset || s.Overlaps(u) != tc.overlp {
			t.Errorf("%q vs %q: subset %v overlaps %v", tc.s, tc.t, s.SubsetOf(u), s.Overlaps(u))
		}
	}
}

func TestContainsAddRemove(t *testing.T) {
	var s Set
	if !s.IsEmpty() || s.Len() != 0 {
		t.Error("zero Set not empty")
	}
	for _, id := range []int{0, 4095, -1, 5000} {
		if s.Add(id) || s.Contains(id) {
			t.Errorf("invalid id %d accepted", id)
		}
		s.Remove(id) // must not panic
	}
	for _, id := range []int{1, 64, 4094} {
		if !s.Add(id) || !s.Contains(id) {
			t.Errorf("Add(%d)", id)
		}
	}
	s.Remove(64)
	if s.Contains(64) || s.String() != "1, 4094" || s != Of(1, 4094) {
		t.Errorf("after Remove(64): %v", s)
	}
	if got := slices.Collect(s.All()); !slices.Equal(got, []int{1, 4094}) {
		t.Errorf("All() = %v", got)
	}
	for range s.All() {
		break // early stop must not panic
	}
}

func TestRangeSet(t *testing.T) {
	if s, ok := RangeSet(60, 200); !ok || s.String() != "60-200" || s.Len() != 141 {
		t.Errorf("RangeSet(60, 200) = %v, %v", s, ok)
	}
	for _, r := range [][2]int{{0, 5}, {5, 4095}, {6, 5}} {
		if _, ok := RangeSet(r[0], r[1]); ok {
			t.Errorf("RangeSet%v accepted", r)
		}
	}
	if got := MustParse("1-3, 5").Ranges(); !slices.Equal(got, []Range{{1, 3}, {5, 5}}) {
		t.Errorf("Ranges() = %v", got)
	}
}

func TestOfPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Of(0) did not panic")
		}
	}()
	Of(0)
}
