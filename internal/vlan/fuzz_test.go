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

import "testing"

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "1, 6-10", "2-10", "1-4094", "4095", "10-6", "1,,2", " 7 - 9 ,1", "1-2-3", "0010"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			if s != (Set{}) {
				t.Fatalf("Parse(%q) failed but returned %v", in, s)
			}
			return
		}
		if s.Contains(0) || s.w[0]&1 != 0 || s.w[63]>>63 != 0 {
			t.Fatalf("Parse(%q) holds an invalid id", in)
		}
		back, err := Parse(s.String())
		if err != nil || back != s {
			t.Fatalf("Parse(%q) = %q, which reads back as %q, %v", in, s, back, err)
		}
		n := 0
		for _, r := range s.Ranges() {
			n += r.Last - r.First + 1
		}
		if n != s.Len() {
			t.Fatalf("Ranges() cover %d ids, Len() = %d", n, s.Len())
		}
	})
}
