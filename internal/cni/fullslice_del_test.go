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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestDelOfAFullSliceAddWhileItWaitsIsNotLost: an ADD that finds the slice full waits, without
// the node lock, for the flusher to finish writing the entry of a DEL'd attachment it is about
// to release. The DEL of that very ADD's attachment comes meanwhile and answers. The ADD must
// not then go on and allocate: nothing would ever release that allocation (its DEL has been
// and gone), and the pool and the reservation would hold the address for a pod that is gone.
func TestDelOfAFullSliceAddWhileItWaitsIsNotLost(t *testing.T) {
	const name, node = "fullslicedel", "node-fsd"
	// Six addresses: five pods, then c-fsd-x takes the last.
	ids := []string{"c-fsd-1", "c-fsd-2", "c-fsd-3", "c-fsd-4", "c-fsd-5"}
	fs := fillSlice(t, name, node, "10.84.5.0/24", "10.84.5.8/29", ids, "c-fsd-x")
	conf, pool, dir, g := fs.conf, fs.pool, fs.dir, fs.g
	if _, err := runPlugin("DEL", conf, "c-fsd-x", node, podArgs("c-fsd-x")); err != nil {
		t.Fatal(err)
	}
	// The ADD's first look for a flusher is its wait for c-fsd-x's entry, with the lock let go.
	probed := whenOpened(t, filepath.Join(dir, ".flusher"))
	y := startPlugin(t, "ADD", conf, "c-fsd-y", node, podArgs("c-fsd-y"))
	waitOpened(t, probed, "the full-slice ADD's wait for the flusher")
	if _, err := runPlugin("DEL", conf, "c-fsd-y", node, podArgs("c-fsd-y")); err != nil {
		t.Fatal(err)
	}
	g.open()
	// Whether the ADD fails or not, its attachment has had its DEL: nothing of it may stay.
	addErr := y.wait(t)
	flusherGone(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "c-fsd-y_net1")); err == nil {
		t.Errorf("c-fsd-y's record outlives its DEL (the ADD: %v)", addErr)
	}
	eventually(t, func() error {
		for key, a := range ippool(t, pool).Spec.Allocations {
			if a.ContainerID == "c-fsd-y" || a.ContainerID == "c-fsd-x" {
				return fmt.Errorf("pool entry %s of %s outlives its DEL (the ADD: %v)", key, a.ContainerID, addErr)
			}
		}
		return nil
	})
	list := &wbv1.OverlappingRangeIPReservationList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(poolNS)); err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Items {
		if o.Spec.ContainerID == "c-fsd-y" || o.Spec.ContainerID == "c-fsd-x" {
			t.Errorf("reservation %s of %s outlives its DEL (the ADD: %v)", o.Name, o.Spec.ContainerID, addErr)
		}
	}
	for _, id := range ids {
		if _, err := runPlugin("DEL", conf, id, node, podArgs(id)); err != nil {
			t.Fatal(err)
		}
	}
	flusherGone(t, dir)
}
