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
	"net/netip"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestPoolsCarryNoManagedFields: the IPPools the plugin writes hold no managedFields, which
// listed every entry again and made each write to a large pool the apiserver's slowest work.
// A pool made by the plugin loses them after its create; one that gained them from another
// writer (a create by whereabouts, a server-side apply) loses them at the plugin's next write,
// and its entries stay as they were.
func TestPoolsCarryNoManagedFields(t *testing.T) {
	const name, node = "untracked", "node-untracked"
	slicePool(t, name, "10.85.3.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.85.3.16/28"})
	slice, pool := netip.MustParsePrefix("10.85.3.16/28"), name+"-"+node+"-10.85.3.16-28"
	conf := netConf("1.1.0", name, `"range":"10.85.3.0/24","node_slice_size":"/28"`)
	first := addProcess(t, conf, node, "c-untracked-0")
	poolEntry(t, pool, slice, first, "c-untracked-0")
	untracked(t, pool)

	// Another writer's server-side apply gives the pool managedFields again.
	ctx := context.Background()
	label := &wbv1.IPPool{ObjectMeta: metav1.ObjectMeta{Name: pool, Namespace: poolNS}}
	apply := fmt.Appendf(nil, `{"apiVersion":%q,"kind":"IPPool","metadata":{"name":%q,"namespace":%q,"labels":{"team":"net"}}}`,
		wbv1.GroupVersion.String(), pool, poolNS)
	if err := k8s.Patch(ctx, label, client.RawPatch(types.ApplyPatchType, apply), client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	p := &wbv1.IPPool{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: pool}, p); err != nil {
		t.Fatal(err)
	}
	if len(p.ManagedFields) == 0 {
		t.Fatal("the apply left the pool without managedFields: nothing to strip")
	}
	second := addProcess(t, conf, node, "c-untracked-1")
	poolEntry(t, pool, slice, second, "c-untracked-1")
	untracked(t, pool)
	poolEntry(t, pool, slice, first, "c-untracked-0")
	for i, id := range []string{"c-untracked-0", "c-untracked-1"} {
		if _, err := runPlugin("DEL", conf, id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
			t.Fatalf("DEL %d: %v", i, err)
		}
	}
}

// untracked fails t unless pool holds no managedFields.
func untracked(t *testing.T, pool string) {
	t.Helper()
	eventually(t, func() error {
		p := &wbv1.IPPool{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: poolNS, Name: pool}, p); err != nil {
			return err
		}
		if n := len(p.ManagedFields); n > 0 {
			return fmt.Errorf("IPPool %s holds %d managedFields entries (%s ...), want none", pool, n, p.ManagedFields[0].Manager)
		}
		return nil
	})
}
