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

package openflow

import "testing"

// FuzzMasks checks that the blocks cover exactly the range, in order and without overlap.
func FuzzMasks(f *testing.F) {
	f.Add(uint16(1000), uint16(2000))
	f.Add(uint16(0), uint16(65535))
	f.Add(uint16(65535), uint16(65535))
	f.Fuzz(func(t *testing.T, a, b uint16) {
		if b < a {
			a, b = b, a
		}
		r := PortRange{First: a, Last: b}
		masks := Masks(r)
		if r.Any() {
			if masks != nil {
				t.Fatalf("any-port range %v gave masks %v", r, masks)
			}
			return
		}
		if len(masks) > 30 {
			t.Fatalf("%v needs %d blocks", r, len(masks))
		}
		next := uint32(a)
		for _, m := range masks {
			size := uint32(^m.Mask) + 1
			if uint32(m.Value) != next || m.Value&^m.Mask != 0 || size&(size-1) != 0 {
				t.Fatalf("%v: block %v does not start at %d or is not aligned", r, m, next)
			}
			next += size
		}
		if next != uint32(b)+1 {
			t.Fatalf("%v: blocks end at %d", r, next-1)
		}
	})
}
