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

func TestUsageIsReferenceCounted(t *testing.T) {
	var u Usage
	if added := u.Acquire(MustParse("10, 20")); added.String() != "10, 20" {
		t.Errorf("first port added %v", added)
	}
	if added := u.Acquire(MustParse("10, 30")); added.String() != "30" {
		t.Errorf("second port added %v", added)
	}
	if u.Count(10) != 2 || u.Count(20) != 1 || u.Count(0) != 0 || u.InUse().String() != "10, 20, 30" {
		t.Errorf("counts %d %d, in use %v", u.Count(10), u.Count(20), u.InUse())
	}
	freed, err := u.Release(MustParse("10, 20"))
	if err != nil || freed.String() != "20" || !u.InUse().Contains(10) {
		t.Errorf("first release freed %v, %v; in use %v", freed, err, u.InUse())
	}
	// Releasing something not in use changes nothing at all.
	if _, err := u.Release(MustParse("10, 20")); !errors.Is(err, ErrNotInUse) || u.Count(10) != 1 {
		t.Errorf("over-release: %v, count(10) = %d", err, u.Count(10))
	}
	freed, err = u.Release(MustParse("10, 30"))
	if err != nil || freed.String() != "10, 30" || !u.InUse().IsEmpty() {
		t.Errorf("last release freed %v, %v; in use %v", freed, err, u.InUse())
	}
	if freed, err := u.Release(Set{}); err != nil || !freed.IsEmpty() {
		t.Error("empty release")
	}
}
