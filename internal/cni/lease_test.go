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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLeaseFreeUnderSkew: whereabouts' Lease, renewed by a holder whose clock is up to half a
// second behind or ahead of this one, is never taken while held; one given back or lapsed is.
func TestLeaseFreeUnderSkew(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	held := func(holder string, renewedAgo time.Duration, seconds int32) *lease {
		l := &lease{}
		l.Spec.HolderIdentity = &holder
		l.Spec.LeaseDurationSeconds = &seconds
		r := metav1.NewMicroTime(now.Add(-renewedAgo))
		l.Spec.RenewTime = &r
		return l
	}
	for _, tc := range []struct {
		name     string
		l        *lease
		seenFor  time.Duration
		wantFree bool
	}{
		{"given back", held("", 0, 1), 0, true},
		{"renewed just now", held("wb", 0, 1), 0, false},
		// The holder's clock half a second behind: its renewal looks 0.5 s older than it is.
		{"renewed 0.6 s ago by a clock 0.5 s behind", held("wb", 1100*time.Millisecond, 1), 100 * time.Millisecond, false},
		{"renewed 1.4 s ago by a clock 0.5 s behind", held("wb", 1400*time.Millisecond, 1), 200 * time.Millisecond, false},
		{"renewal seen unchanged for its duration", held("wb", 1400*time.Millisecond, 1), 1100 * time.Millisecond, true},
		{"lapsed long ago", held("wb", time.Minute, 1), 0, true},
		{"rackwire's own hold", held("tenant/p/c", 5*time.Second, 15), time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := time.Time{}
			if tc.seenFor > 0 {
				seen = now.Add(-tc.seenFor)
			}
			if got := free(tc.l, seen, now); got != tc.wantFree {
				t.Errorf("free = %v, want %v", got, tc.wantFree)
			}
		})
	}
}
