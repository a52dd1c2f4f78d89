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

package hostlink

import (
	"testing"
	"time"
)

func TestClaimOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		a, b claim
	}{
		{"an entry beats discovered wiring that holds the port", claim{spec: true, since: t0.Add(time.Hour), uid: "z"}, claim{held: true, since: t0, uid: "a"}},
		{"a holder beats a newcomer of the same second", claim{held: true, since: t0, uid: "z"}, claim{since: t0, uid: "a"}},
		{"the earlier of two holders", claim{held: true, since: t0, uid: "z"}, claim{held: true, since: t0.Add(time.Second), uid: "a"}},
		{"two holders of one second: the lower UID", claim{held: true, since: t0, uid: "a"}, claim{held: true, since: t0, uid: "b"}},
	} {
		if !tc.a.before(tc.b) || tc.b.before(tc.a) {
			t.Errorf("%s: want %+v before %+v", tc.name, tc.a, tc.b)
		}
	}
}
