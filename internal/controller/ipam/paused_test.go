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

package ipam

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A cluster that serves Cluster only as v1beta1 (Cluster API before v1.11) pauses claims
// through the gate as v1beta2 does; reads of spec.paused happen once per resourceVersion.
func TestClusterGateServedAsV1beta1Only(t *testing.T) {
	v1beta1 := schema.GroupVersion{Group: "cluster.x-k8s.io", Version: "v1beta1"}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{v1beta1})
	mapper.Add(v1beta1.WithKind("Cluster"), meta.RESTScopeNamespace)
	cluster := func(name string, paused bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1beta1.WithKind("Cluster"))
		u.SetNamespace("ns")
		u.SetName(name)
		_ = unstructured.SetNestedField(u.Object, paused, "spec", "paused")
		return u
	}
	live := 0
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithRESTMapper(mapper).
		WithObjects(cluster("running", false), cluster("moving", true)).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*unstructured.Unstructured); ok {
				live++
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	gate := &ClusterGate{Cache: c, Live: c, Mapper: mapper}
	for _, tc := range []struct {
		cluster string
		want    clusterState
	}{
		{"running", clusterReady}, {"running", clusterReady}, {"moving", clusterPaused}, {"gone", clusterMissing}, {"", clusterNone},
	} {
		got, err := gate.state(context.Background(), "ns", tc.cluster)
		if err != nil || got != tc.want {
			t.Errorf("state(%q) = %v, %v; want %v", tc.cluster, got, err, tc.want)
		}
	}
	if live != 2 {
		t.Errorf("%d live reads of spec.paused, want one per Cluster and resourceVersion (2)", live)
	}

	noCAPI := &ClusterGate{Cache: c, Live: c, Mapper: meta.NewDefaultRESTMapper(nil)}
	if got, err := noCAPI.state(context.Background(), "ns", "running"); err != nil || got != clusterNone {
		t.Errorf("without the Cluster CRD: %v, %v; want clusterNone", got, err)
	}
}
