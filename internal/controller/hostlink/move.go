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
	"context"
	"fmt"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// CAPI's pause, which clusterctl move sets on the Cluster (spec.paused) and anyone may set on
// an object (the annotation); CAPM3 then pauses the Cluster's hosts and copies their status
// into BMO's status annotation, unless the host is already paused.
const (
	capiPausedAnnotation = "cluster.x-k8s.io/paused"
	capiClusterNameLabel = "cluster.x-k8s.io/cluster-name"
)

// clusterVersions are the CAPI Cluster versions tried, newest first.
var clusterVersions = []string{"v1beta2", "v1beta1"}

// consumerPaused says why the host's consumer is paused, "" when it is not. Only a consumer
// that counts (in the host's namespace, naming the host back) can freeze rackwire's hold: a
// consumerRef anyone writes must not let a host out of it.
func consumerPaused(ctx context.Context, c client.Reader, host *metal3v1alpha1.BareMetalHost) (string, error) {
	ref := host.Spec.ConsumerRef
	if ref == nil || ref.Kind != Metal3MachineGVK.Kind || (ref.Namespace != "" && ref.Namespace != host.Namespace) {
		return "", nil
	}
	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(Metal3MachineGVK)
	key := client.ObjectKey{Namespace: host.Namespace, Name: ref.Name}
	if err := c.Get(ctx, key, m); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return "", nil
		}
		return "", err
	}
	if m.GetAnnotations()[networkv1alpha1.AnnotationConsumerHost] != host.Namespace+"/"+host.Name {
		return "", nil
	}
	if _, ok := m.GetAnnotations()[capiPausedAnnotation]; ok {
		return fmt.Sprintf("Metal3Machine %s carries %s", key, capiPausedAnnotation), nil
	}
	name := m.GetLabels()[capiClusterNameLabel]
	if name == "" {
		return "", nil
	}
	for _, v := range clusterVersions {
		cl := &unstructured.Unstructured{}
		cl.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: v, Kind: "Cluster"})
		err := c.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: name}, cl)
		if meta.IsNoMatchError(err) {
			continue
		}
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if _, ok := cl.GetAnnotations()[capiPausedAnnotation]; ok {
			return fmt.Sprintf("Cluster %s/%s carries %s", host.Namespace, name, capiPausedAnnotation), nil
		}
		if p, _, _ := unstructured.NestedBool(cl.Object, "spec", "paused"); p {
			return fmt.Sprintf("Cluster %s/%s is paused (spec.paused)", host.Namespace, name), nil
		}
		return "", nil
	}
	return "", nil
}
