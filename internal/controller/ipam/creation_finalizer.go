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
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// The claim finalizer goes on as a claim is created, so that a claim costs the controller
// two writes: its IPAddress's create and the claim's status. One claim write cannot carry
// both the finalizer and the status: the apiserver keeps metadata out of a status write and
// status out of a write of the object (both kinds have a status subresource).
//
// config/ipam/claim-finalizer-policy.yaml has the apiserver put it on; the claims' mutating
// webhooks call the functions below only where that policy's API is not served (their
// matchConditions skip whatever the policy decided). Both decide alike, from the claim
// alone: nothing for a claim that carries the finalizer or Cluster API's paused annotation,
// or for a Cluster API claim of another provider's pool. A claim of a paused Cluster gets
// it (docs/ipam.md, "Claims of a paused cluster").

// FinalizeNewIPClaim puts the finalizer on a Metal3 IPClaim being created.
func FinalizeNewIPClaim(claim *ipamv1alpha1.IPClaim) {
	if finalizeAtCreation(claim, claimFinalizers) {
		claim.Finalizers = append(claim.Finalizers, claimFinalizers.name)
	}
}

// FinalizeNewIPAddressClaim puts the finalizer on a Cluster API IPAddressClaim of one of
// rackwire's pools being created.
func FinalizeNewIPAddressClaim(claim *capiipamv1beta2.IPAddressClaim) {
	if ours(claim.Spec.PoolRef) && finalizeAtCreation(claim, capiClaimFinalizers) {
		claim.Finalizers = append(claim.Finalizers, capiClaimFinalizers.name)
	}
}

func finalizeAtCreation(claim client.Object, f finalizers) bool {
	_, paused := claim.GetAnnotations()[PausedAnnotation]
	return !paused && !f.on(claim)
}
