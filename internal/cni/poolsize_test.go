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

package cni_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestPoolSizeFromTheAnswer: the flusher tells a small pool from a large one (whose writes
// it spaces) by the size of the pool the apiserver answers a write with: a pool of 16 or 200
// entries of 64-character container IDs is small, one of 300 or 1,000 large.
func TestPoolSizeFromTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		entries   int
		wantSmall bool
	}{{16, true}, {200, true}, {300, false}, {1000, false}} {
		p := &wbv1.IPPool{TypeMeta: metav1.TypeMeta{APIVersion: "whereabouts.cni.cncf.io/v1alpha1", Kind: "IPPool"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("answer-size-", tc.entries), Namespace: "default"},
			Spec:       wbv1.IPPoolSpec{Range: "10.96.0.0/16", Allocations: map[string]wbv1.IPAllocation{}}}
		for i := range tc.entries {
			p.Spec.Allocations[fmt.Sprint(i+1)] = wbv1.IPAllocation{ContainerID: fmt.Sprintf("%064x", i), PodRef: fmt.Sprintf("tenant-a/pod-%d", i), IfName: "net1"}
		}
		size, small, err := cni.CreatePoolAnswer(kubeconfig, p)
		if err != nil {
			t.Fatal(err)
		}
		if small != tc.wantSmall {
			t.Errorf("a pool of %d entries answered with %d bytes: small %v, want %v", tc.entries, size, small, tc.wantSmall)
		}
	}
}
