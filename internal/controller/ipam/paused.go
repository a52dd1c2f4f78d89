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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PausedAnnotation pauses reconciliation of the object carrying it (Cluster API's).
const PausedAnnotation = "cluster.x-k8s.io/paused"

// ClusterNameLabel is Cluster API's label of objects that belong to a cluster; clusterctl
// move selects what it moves by it.
const ClusterNameLabel = "cluster.x-k8s.io/cluster-name"

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get

// paused reports whether any of objs carries the paused annotation, or cluster names a
// Cluster API Cluster that is paused. The Cluster is read unstructured so that rackwire
// needs neither the Cluster API core types nor the CRD: without the CRD nothing is paused.
func paused(ctx context.Context, r client.Reader, namespace, cluster string, objs ...client.Object) (bool, error) {
	for _, o := range objs {
		if _, ok := o.GetAnnotations()[PausedAnnotation]; ok {
			return true, nil
		}
	}
	if cluster == "" {
		return false, nil
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	u.SetKind("Cluster")
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: cluster}, u)
	switch {
	case meta.IsNoMatchError(err), apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	if _, ok := u.GetAnnotations()[PausedAnnotation]; ok {
		return true, nil
	}
	p, _, _ := unstructured.NestedBool(u.Object, "spec", "paused")
	return p, nil
}
