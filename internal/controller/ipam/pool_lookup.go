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

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// getPool reads a claim's IPPool from the cache; nil when it does not exist (yet). The
// result is the cache's own object, not a copy: callers only read it. A copy cost every
// claim reconcile a copy of the pool's status.allocations, one entry per address in use,
// which made claims slower as the pool filled (test/bench).
func getPool(ctx context.Context, c client.Reader, namespace, name string) (*ipamv1alpha1.IPPool, error) {
	pool := &ipamv1alpha1.IPPool{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pool, client.UnsafeDisableDeepCopy); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return pool, nil
}

// clusterOf is the Cluster API cluster a pool belongs to, if any.
func clusterOf(pool *ipamv1alpha1.IPPool) string {
	if pool == nil || pool.Spec.ClusterName == nil {
		return ""
	}
	return *pool.Spec.ClusterName
}

// withPool lists the objects whose paused annotation pauses a claim.
func withPool(pool *ipamv1alpha1.IPPool, claim client.Object) []client.Object {
	if pool == nil {
		return []client.Object{claim}
	}
	return []client.Object{claim, pool}
}

// owners makes the claim the controller of an IPAddress and the pool one more owner, so
// that clusterctl move carries addresses along with both. The pool's reference blocks its
// deletion in the foreground until the address is gone.
func owners(scheme *runtime.Scheme, ip, pool, claim client.Object) error {
	if err := controllerutil.SetOwnerReference(pool, ip, scheme, controllerutil.WithBlockOwnerDeletion(true)); err != nil {
		return err
	}
	return controllerutil.SetControllerReference(claim, ip, scheme)
}
