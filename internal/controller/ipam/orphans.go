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
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// kinds are the IPAddress kinds this manager serves.
func (r *IPPoolReconciler) kinds() []addressKind {
	if r.CAPI {
		return []addressKind{metal3Kind, capiKind}
	}
	return []addressKind{metal3Kind}
}

func describeAddress(k addressKind, o client.Object, claim string) string {
	if claim == "" {
		return fmt.Sprintf("IPAddress %s (an external reservation: it names no claim)", o.GetName())
	}
	if k.claimKind == kindCAPI {
		return fmt.Sprintf("ipam.cluster.x-k8s.io IPAddress %s (IPAddressClaim %s)", o.GetName(), claim)
	}
	return fmt.Sprintf("IPAddress %s (IPClaim %s)", o.GetName(), claim)
}

// claimGone reports whether an IPAddress names as owner a claim that no longer exists: its
// claim was deleted while a create that had timed out was still landing, or a claim of the
// same name replaced it. Nobody else releases such an address when no garbage collector
// runs, or when the collector's deletion waits on our finalizer. The cache answers first;
// a live read confirms, since the cache may not show a claim created a moment ago.
func (r *IPPoolReconciler) claimGone(ctx context.Context, k addressKind, o client.Object, claim string) (bool, error) {
	uid, ok := claimOwner(o, k.claimKind)
	if !ok {
		// Made by hand or by another tool: it holds its address until someone deletes it.
		return false, nil
	}
	c := newClaimObject(k)
	key := client.ObjectKey{Namespace: o.GetNamespace(), Name: claim}
	err := r.Get(ctx, key, c, client.UnsafeDisableDeepCopy)
	if err == nil && c.GetUID() == uid {
		return false, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	m := &metav1.PartialObjectMetadata{}
	gvk, err := r.GroupVersionKindFor(c)
	if err != nil {
		return false, err
	}
	m.SetGroupVersionKind(gvk)
	err = r.APIReader.Get(ctx, key, m)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return m.UID != uid, nil
}

func newClaimObject(k addressKind) client.Object {
	if k.claimKind == kindCAPI {
		return &capiipamv1beta2.IPAddressClaim{}
	}
	return &ipamv1alpha1.IPClaim{}
}

func (r *IPPoolReconciler) releaseOrphans(ctx context.Context, orphans []orphan) error {
	for _, o := range orphans {
		obj := o.obj.DeepCopyObject().(client.Object)
		if err := release(ctx, r.Client, obj, o.kind.addrFin); err != nil {
			return err
		}
	}
	return nil
}

// label puts the pool label on IPAddresses of the pool that lack it, so that the listing
// by label that the IndexesOmitted condition and the migration guide give finds them all.
func (r *IPPoolReconciler) label(ctx context.Context, pool string, objs []orphan) error {
	for _, o := range objs {
		obj := o.obj.DeepCopyObject().(client.Object)
		before := obj.DeepCopyObject().(client.Object)
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[PoolLabel] = pool
		obj.SetLabels(labels)
		if err := r.Patch(ctx, obj, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
