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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

const (
	// PoolFinalizer keeps an IPPool until none of its addresses is allocated.
	PoolFinalizer = "ipam.metal3.io/ippool"
	// ClaimFinalizer keeps a claim (of either kind) until its address is released.
	ClaimFinalizer = "ipam.metal3.io/ipclaim"
	// AddressFinalizer keeps an IPAddress (of either kind) while its claim lives.
	AddressFinalizer = "ipam.metal3.io/ipaddress"
)

// addFinalizer adds f with a patch of its own: reconcilers add their finalizer and return,
// so that nothing is allocated for an object that could vanish without a release.
func addFinalizer(ctx context.Context, c client.Client, o client.Object, f string) error {
	before := o.DeepCopyObject().(client.Object)
	if !controllerutil.AddFinalizer(o, f) {
		return nil
	}
	return c.Patch(ctx, o, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// removeFinalizer drops f; an object already gone is fine.
func removeFinalizer(ctx context.Context, c client.Client, o client.Object, f string) error {
	before := o.DeepCopyObject().(client.Object)
	if !controllerutil.RemoveFinalizer(o, f) {
		return nil
	}
	return client.IgnoreNotFound(c.Patch(ctx, o, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

// release deletes an IPAddress of either kind that its claim no longer needs.
func release(ctx context.Context, c client.Client, o client.Object) error {
	if err := removeFinalizer(ctx, c, o, AddressFinalizer); err != nil {
		return err
	}
	if o.GetDeletionTimestamp() != nil {
		return nil
	}
	if err := c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
