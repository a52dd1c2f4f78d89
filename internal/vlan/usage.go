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
	"fmt"
)

// ErrNotInUse is returned by Release for a VLAN that nothing acquired.
var ErrNotInUse = errors.New("VLAN not in use")

// Usage counts how many users (ports, typically, within one namespace) hold each VLAN,
// so that a VLAN stays in use until the last of them lets it go. The zero value is
// ready to use. It is not safe for concurrent use.
type Usage struct {
	counts map[uint16]uint32
	inUse  Set
}

// Acquire counts one more user of every id in s and returns the ids that were not in
// use before.
func (u *Usage) Acquire(s Set) (added Set) {
	if u.counts == nil {
		u.counts = make(map[uint16]uint32)
	}
	for id := range s.All() {
		u.counts[uint16(id)]++
	}
	added = s.Difference(u.inUse)
	u.inUse = u.inUse.Union(s)
	return added
}

// Release counts one user less of every id in s and returns the ids that are no longer
// in use. If an id of s is not in use it changes nothing and fails with ErrNotInUse:
// a release without its acquire is a bookkeeping bug that must not free someone else's
// VLAN.
func (u *Usage) Release(s Set) (freed Set, err error) {
	if missing := s.Difference(u.inUse); !missing.IsEmpty() {
		return Set{}, fmt.Errorf("%w: %s", ErrNotInUse, missing)
	}
	for id := range s.All() {
		if u.counts[uint16(id)]--; u.counts[uint16(id)] == 0 {
			delete(u.counts, uint16(id))
			freed.add(id)
		}
	}
	u.inUse = u.inUse.Difference(freed)
	return freed, nil
}

// InUse returns the ids with at least one user.
func (u *Usage) InUse() Set { return u.inUse }

// Count returns how many users hold id.
func (u *Usage) Count(id int) int {
	if !Valid(id) {
		return 0
	}
	return int(u.counts[uint16(id)])
}
