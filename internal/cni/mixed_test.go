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
	"strings"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
)

// TestSharedSlicesWithoutLeaseRefused: on a NodeSlicePool the manager marked as shared with
// whereabouts, an ADD of a configuration without whereabouts_lease (which would answer
// before writing a pool whereabouts allocates from too) fails, naming the key.
func TestSharedSlicesWithoutLeaseRefused(t *testing.T) {
	nsp := slicePool(t, "mixednet", "10.87.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-m", SliceRange: "10.87.0.16/28"})
	nsp.Annotations = map[string]string{cniconf.AnnotationSharedWithWhereabouts: "tenant/wb-mixednet"}
	if err := k8s.Update(t.Context(), nsp); err != nil {
		t.Fatal(err)
	}
	conf := netConf("1.1.0", "mixednet", `"range":"10.87.0.0/24","node_slice_size":"/28"`)
	_, err := runPlugin("ADD", conf, "c-mixed", "node-m", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-mixed")
	if err == nil || !strings.Contains(err.Error(), "whereabouts_lease") || !strings.Contains(err.Error(), "tenant/wb-mixednet") {
		t.Fatalf("ADD on slices shared with whereabouts, without whereabouts_lease: %v", err)
	}
	// Its DEL (the runtime's, after the failed ADD) still succeeds.
	if _, err := runPlugin("DEL", conf, "c-mixed", "node-m", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-mixed"); err != nil {
		t.Fatal(err)
	}
}
