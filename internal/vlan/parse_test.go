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
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		n        int
	}{
		{"", "", 0},
		{"  ", "", 0},
		{"1", "1", 1},
		{"1, 6-10", "1, 6-10", 6},
		{"2-10", "2-10", 9},
		{"1,6-10", "1, 6-10", 6},
		{" 10 - 12 ,3", "3, 10-12", 4},
		{"5-5", "5", 1},
		{"7, 8, 9, 1", "1, 7-9", 4},
		{"1-100, 50-150", "1-150", 150},
		{"1-4094", "1-4094", 4094},
		{"4094", "4094", 1},
		{"0010", "10", 1},
		{"63-65, 127-128", "63-65, 127-128", 5},
	} {
		s, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if s.String() != tc.want || s.Len() != tc.n {
			t.Errorf("Parse(%q) = %q (%d ids), want %q (%d)", tc.in, s, s.Len(), tc.want, tc.n)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in    string
		item  int
		token string
		msg   string
	}{
		{"0", 1, "0", `VLAN list "0": item 1 "0": VLAN id 0 is out of range 1-4094`},
		{"1, 4095", 2, "4095", `VLAN list "1, 4095": item 2 "4095": VLAN id 4095 is out of range 1-4094`},
		{"1, 10-6", 2, "10-6", `VLAN list "1, 10-6": item 2 "10-6": range runs backwards`},
		{"1,,2", 2, "", `VLAN list "1,,2": item 2 "": empty item`},
		{"1, 2,", 3, "", `VLAN list "1, 2,": item 3 "": empty item`},
		{"1, x", 2, "x", `VLAN list "1, x": item 2 "x": "x" is not a VLAN id`},
		{"-5", 1, "-5", `VLAN list "-5": item 1 "-5": missing VLAN id`},
		{"5-", 1, "5-", `VLAN list "5-": item 1 "5-": missing VLAN id`},
		{"1-2-3", 1, "1-2-3", `VLAN list "1-2-3": item 1 "1-2-3": "2-3" is not a VLAN id`},
		{"+5", 1, "+5", `VLAN list "+5": item 1 "+5": "+5" is not a VLAN id`},
		{"1 2", 1, "1 2", `VLAN list "1 2": item 1 "1 2": "1 2" is not a VLAN id`},
		{"99999999999999999999", 1, "99999999999999999999", `VLAN list "99999999999999999999": item 1 "99999999999999999999": VLAN id 99999999999999999999 is out of range 1-4094`},
	} {
		_, err := Parse(tc.in)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, want a ParseError", tc.in, err)
			continue
		}
		if pe.Item != tc.item || pe.Token != tc.token || pe.Error() != tc.msg {
			t.Errorf("Parse(%q) = item %d token %q: %s\nwant item %d token %q: %s", tc.in, pe.Item, pe.Token, pe, tc.item, tc.token, tc.msg)
		}
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse did not panic")
		}
	}()
	MustParse("4095")
}

func TestText(t *testing.T) {
	var s Set
	if err := s.UnmarshalText([]byte("3, 1-2")); err != nil || s != MustParse("1-3") {
		t.Errorf("UnmarshalText = %v, %v", s, err)
	}
	if b, _ := s.MarshalText(); string(b) != "1-3" {
		t.Errorf("MarshalText = %s", b)
	}
	if err := s.UnmarshalText([]byte("0")); err == nil || s != MustParse("1-3") {
		t.Errorf("UnmarshalText of junk = %v and changed s to %v", err, s)
	}
}
