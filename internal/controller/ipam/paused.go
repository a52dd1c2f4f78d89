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
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PausedAnnotation pauses reconciliation of the object carrying it (Cluster API's).
const PausedAnnotation = "cluster.x-k8s.io/paused"

// ClusterNameLabel is Cluster API's label of objects that belong to a cluster; clusterctl
// move selects what it moves by it.
const ClusterNameLabel = "cluster.x-k8s.io/cluster-name"

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch

var clusterGroupKind = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Cluster"}

// clusterState is what a claim needs to know of its Cluster API Cluster.
type clusterState int

const (
	clusterNone    clusterState = iota // no cluster named, or Cluster API not installed
	clusterReady                       // the Cluster exists and is not paused
	clusterPaused                      // paused: reconcile nothing
	clusterMissing                     // named but absent: allocate nothing (the contract's rule; clusterctl move creates claims before it unpauses)
)

// ClusterGate reads Clusters through a metadata-only informer of the manager's cache, in
// whichever version the apiserver serves (v1beta2 or only v1beta1), and their spec.paused
// with a live read only when a Cluster's resourceVersion changed.
type ClusterGate struct {
	Cache  client.Reader // the manager's cache: a PartialObjectMetadata read starts a metadata informer
	Live   client.Reader
	Mapper meta.RESTMapper

	mu        sync.Mutex
	checked   time.Time // when the mapper last said Cluster API is not installed
	gvk       schema.GroupVersionKind
	specPause map[types.NamespacedName]pausedAt
}

type pausedAt struct {
	resourceVersion string
	paused          bool
}

// notInstalledFor is how long the gate believes that Cluster API is not installed before it
// asks the apiserver again; asking on every claim would cost a discovery round trip each.
const notInstalledFor = time.Minute

func (g *ClusterGate) version(now time.Time) (schema.GroupVersionKind, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.gvk.Empty() {
		return g.gvk, true
	}
	if !g.checked.IsZero() && now.Sub(g.checked) < notInstalledFor {
		return schema.GroupVersionKind{}, false
	}
	// The preferred version: v1beta2 where served, else v1beta1.
	m, err := g.Mapper.RESTMapping(clusterGroupKind)
	if err != nil {
		g.checked = now
		return schema.GroupVersionKind{}, false
	}
	g.gvk = m.GroupVersionKind
	return g.gvk, true
}

// state says whether cluster (in namespace) lets a claim go on. The paused annotation on
// any of objs pauses too.
func (g *ClusterGate) state(ctx context.Context, namespace, cluster string, objs ...client.Object) (clusterState, error) {
	for _, o := range objs {
		if _, ok := o.GetAnnotations()[PausedAnnotation]; ok {
			return clusterPaused, nil
		}
	}
	if cluster == "" || g == nil {
		return clusterNone, nil
	}
	gvk, ok := g.version(time.Now())
	if !ok {
		return clusterNone, nil
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	key := types.NamespacedName{Namespace: namespace, Name: cluster}
	err := g.Cache.Get(ctx, key, m)
	switch {
	case apierrors.IsNotFound(err):
		return clusterMissing, nil
	case meta.IsNoMatchError(err):
		g.mu.Lock()
		g.gvk, g.checked = schema.GroupVersionKind{}, time.Now()
		g.mu.Unlock()
		return clusterNone, nil
	case err != nil:
		return clusterNone, err
	}
	if _, ok := m.Annotations[PausedAnnotation]; ok {
		return clusterPaused, nil
	}
	paused, err := g.specPaused(ctx, key, gvk, m.ResourceVersion)
	if err != nil || paused {
		return clusterPaused, err
	}
	return clusterReady, nil
}

// specPaused reads spec.paused, live, once per resourceVersion of the Cluster.
func (g *ClusterGate) specPaused(ctx context.Context, key types.NamespacedName, gvk schema.GroupVersionKind, rv string) (bool, error) {
	g.mu.Lock()
	p, ok := g.specPause[key]
	g.mu.Unlock()
	if ok && p.resourceVersion == rv {
		return p.paused, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := g.Live.Get(ctx, key, u); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	paused, _, _ := unstructured.NestedBool(u.Object, "spec", "paused")
	g.mu.Lock()
	if g.specPause == nil {
		g.specPause = map[types.NamespacedName]pausedAt{}
	}
	g.specPause[key] = pausedAt{u.GetResourceVersion(), paused}
	g.mu.Unlock()
	return paused, nil
}

// claimCluster is the cluster a claim belongs to: its own spec (Cluster API claims), else
// its cluster-name label, else its pool's.
func claimCluster(spec string, claim client.Object, pool string) string {
	if spec != "" {
		return spec
	}
	if c := claim.GetLabels()[ClusterNameLabel]; c != "" {
		return c
	}
	return pool
}
