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

	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// CreationFinalizer puts the claim finalizer on a claim as it is created (the claims'
// mutating webhooks call it), so that a claim costs the controller two writes: its
// IPAddress's create and the claim's status. One claim write cannot carry both the
// finalizer and the status: the apiserver keeps metadata out of a status write and status
// out of a write of the object (both kinds have a status subresource).
//
// It decides as the reconciler does before it adds the finalizer: nothing for a claim of a
// paused cluster (clusterctl move owns those objects). When it cannot tell (the cache is not
// started, a read failed) it leaves the claim alone rather than refuse it: the reconciler
// adds the finalizer first, as before, when the claim comes without it.
type CreationFinalizer struct {
	reader client.Reader
	gate   *ClusterGate
}

// NewCreationFinalizer reads pools and clusters through mgr's cache.
func NewCreationFinalizer(mgr ctrl.Manager) *CreationFinalizer {
	return &CreationFinalizer{
		reader: mgr.GetClient(),
		gate:   &ClusterGate{Cache: mgr.GetCache(), Live: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper()},
	}
}

// IPClaim puts the finalizer on a new Metal3 IPClaim.
func (f *CreationFinalizer) IPClaim(ctx context.Context, claim *ipamv1alpha1.IPClaim) {
	if claimFinalizers.on(claim) || !f.unpaused(ctx, claim, claim.Spec.Pool.Name, "") {
		return
	}
	claim.Finalizers = append(claim.Finalizers, claimFinalizers.name)
}

// IPAddressClaim puts the finalizer on a new Cluster API IPAddressClaim of one of rackwire's
// pools; claims of other providers' pools are left alone.
func (f *CreationFinalizer) IPAddressClaim(ctx context.Context, claim *capiipamv1beta2.IPAddressClaim) {
	if !ours(claim.Spec.PoolRef) || capiClaimFinalizers.on(claim) || !f.unpaused(ctx, claim, claim.Spec.PoolRef.Name, claim.Spec.ClusterName) {
		return
	}
	claim.Finalizers = append(claim.Finalizers, capiClaimFinalizers.name)
}

func (f *CreationFinalizer) unpaused(ctx context.Context, claim client.Object, poolName, clusterName string) bool {
	pool, err := getPool(ctx, f.reader, claim.GetNamespace(), poolName)
	if err != nil {
		return false
	}
	state, err := f.gate.state(ctx, claim.GetNamespace(), claimCluster(clusterName, claim, clusterOf(pool)), withPool(pool, claim)...)
	return err == nil && state != clusterPaused
}
