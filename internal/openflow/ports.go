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

import (
	"fmt"
	"strconv"
	"strings"
)

// PortRange is an inclusive range of TCP/UDP ports; the zero value matches any port.
type PortRange struct{ First, Last uint16 }

// Any reports whether the range leaves the port unmatched.
func (r PortRange) Any() bool { return r == PortRange{} || (r.First == 0 && r.Last == 0xffff) }

// ParsePortRange reads "22" or "1000-2000"; the empty string is any port.
func ParsePortRange(s string) (PortRange, error) {
	if s == "" {
		return PortRange{}, nil
	}
	first, last, isRange := strings.Cut(s, "-")
	a, err := strconv.ParseUint(first, 10, 16)
	if err != nil {
		return PortRange{}, fmt.Errorf("port range %q: %q is not a port number", s, first)
	}
	b := a
	if isRange {
		if b, err = strconv.ParseUint(last, 10, 16); err != nil {
			return PortRange{}, fmt.Errorf("port range %q: %q is not a port number", s, last)
		}
	}
	if b < a {
		return PortRange{}, fmt.Errorf("port range %q: %d is lower than %d", s, b, a)
	}
	return PortRange{First: uint16(a), Last: uint16(b)}, nil
}

// Masked is one value/mask match of a port field: the ports p with p&Mask == Value.
type Masked struct{ Value, Mask uint16 }

func (m Masked) String() string {
	if m.Mask == 0xffff {
		return strconv.Itoa(int(m.Value))
	}
	return fmt.Sprintf("0x%04x/0x%04x", m.Value, m.Mask)
}

// Masks covers the range exactly with the fewest aligned value/mask blocks, since OpenFlow
// matches ports only by mask: 1000-2000 needs 7 blocks, a single port or a whole aligned
// block needs one. At most 30 blocks cover any range of 16-bit ports.
func Masks(r PortRange) []Masked {
	if r.Any() {
		return nil
	}
	var out []Masked
	lo, hi := uint32(r.First), uint32(r.Last)
	for lo <= hi {
		// The largest block starting at lo that is aligned and does not pass hi.
		size := uint32(1)
		for lo&(size*2-1) == 0 && lo+size*2-1 <= hi && size < 1<<16 {
			size *= 2
		}
		out = append(out, Masked{Value: uint16(lo), Mask: uint16(^(size - 1))})
		lo += size
	}
	return out
}
