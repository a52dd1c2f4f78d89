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
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The finalizers are ip-address-manager's own names, so that objects it wrote and objects
// rackwire writes are one population: either project releases what the other protected.
const (
	// PoolFinalizer keeps an IPPool until none of its addresses is allocated.
	PoolFinalizer = "ippool.ipam.metal3.io"
	// ClaimFinalizer keeps a Metal3 IPClaim until its address is released.
	ClaimFinalizer = "ipclaim.ipam.metal3.io"
	// AddressFinalizer keeps a Metal3 IPAddress while its claim lives.
	AddressFinalizer = "ipaddress.ipam.metal3.io"
	// CAPIClaimFinalizer keeps a Cluster API IPAddressClaim until its address is released.
	CAPIClaimFinalizer = "ipam.metal3.io/ipaddressclaim"
	// CAPIAddressFinalizer keeps a Cluster API IPAddress while its claim lives.
	CAPIAddressFinalizer = "ipam.metal3.io/ipaddress"
)

// finalizers is one kind's finalizer and the other names that mean the same: earlier
// rackwire releases wrote ipam.metal3.io/<kind> on both APIs' objects.
type finalizers struct {
	name   string
	legacy []string
}

var (
	poolFinalizers        = finalizers{PoolFinalizer, []string{"ipam.metal3.io/ippool"}}
	claimFinalizers       = finalizers{ClaimFinalizer, []string{"ipam.metal3.io/ipclaim"}}
	capiClaimFinalizers   = finalizers{CAPIClaimFinalizer, []string{"ipam.metal3.io/ipclaim"}}
	addressFinalizers     = finalizers{AddressFinalizer, []string{CAPIAddressFinalizer}}
	capiAddressFinalizers = finalizers{CAPIAddressFinalizer, nil}
)

func (f finalizers) is(s string) bool { return s == f.name || slices.Contains(f.legacy, s) }

// on reports whether o carries any name of f.
func (f finalizers) on(o client.Object) bool { return slices.ContainsFunc(o.GetFinalizers(), f.is) }

// onlyOurs reports whether every finalizer left on o is one of f: until then someone else
// (CAPM3 while the host uses the address) still needs the object.
func (f finalizers) onlyOurs(o client.Object) bool {
	for _, s := range o.GetFinalizers() {
		if !f.is(s) {
			return false
		}
	}
	return true
}

// add adds f's name with a patch of its own: reconcilers add their finalizer and return,
// so that nothing is allocated for an object that could vanish without a release.
func (f finalizers) add(ctx context.Context, c client.Client, o client.Object) error {
	if f.on(o) {
		return nil
	}
	before := o.DeepCopyObject().(client.Object)
	o.SetFinalizers(append(o.GetFinalizers(), f.name))
	return c.Patch(ctx, o, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// remove drops every name of f; an object already gone is fine.
func (f finalizers) remove(ctx context.Context, c client.Client, o client.Object) error {
	if !f.on(o) {
		return nil
	}
	before := o.DeepCopyObject().(client.Object)
	o.SetFinalizers(slices.DeleteFunc(slices.Clone(o.GetFinalizers()), f.is))
	return client.IgnoreNotFound(c.Patch(ctx, o, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

// release deletes an IPAddress that its claim no longer needs, dropping the finalizers
// (ours and ip-address-manager's) that would keep it.
func release(ctx context.Context, c client.Client, o client.Object, f finalizers) error {
	if err := f.remove(ctx, c, o); err != nil {
		return err
	}
	if o.GetDeletionTimestamp() != nil {
		return nil
	}
	if err := c.Delete(ctx, o, client.Preconditions{UID: ptrUID(o)}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}
