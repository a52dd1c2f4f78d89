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
	"strings"

	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// Cache indexes that let a claim find its address and a pool its addresses without listing
// a namespace. Values are names; the cache scopes them by namespace.
const (
	// IndexPool indexes IPAddresses of both kinds by the name of their Metal3 IPPool.
	IndexPool = "ipam.metal3.io/pool"
	// IndexClaim indexes IPAddresses of both kinds by the name of their claim
	// (spec.claim, spec.claimRef): IPAddresses are named after their address, not their
	// claim, so this is how a claim finds its own.
	IndexClaim = "ipam.metal3.io/claim"
)

// OursRef reports whether a Cluster API pool reference names one of rackwire's IPPools;
// the Cluster API webhooks judge only those objects.
func OursRef(ref capiipamv1beta2.IPPoolReference) bool { return ours(ref) }

// ours reports whether a Cluster API pool reference names one of our IPPools.
func ours(ref capiipamv1beta2.IPPoolReference) bool {
	return ref.APIGroup == ipamv1alpha1.GroupVersion.Group && ref.Kind == "IPPool" && ref.Name != ""
}

// RegisterIndexes adds the indexes, those of Cluster API IPAddresses only when capi says
// that the API is installed. Both the reconcilers and the webhooks need them and either may
// be set up alone, so a second registration is not an error.
func RegisterIndexes(ctx context.Context, idx client.FieldIndexer, capi bool) error {
	for _, i := range []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&ipamv1alpha1.IPAddress{}, IndexPool, func(o client.Object) []string {
			return nonEmpty(o.(*ipamv1alpha1.IPAddress).Spec.Pool.Name)
		}},
		{&ipamv1alpha1.IPAddress{}, IndexClaim, func(o client.Object) []string {
			return nonEmpty(o.(*ipamv1alpha1.IPAddress).Spec.Claim.Name)
		}},
		{&capiipamv1beta2.IPAddress{}, IndexPool, func(o client.Object) []string {
			if ref := o.(*capiipamv1beta2.IPAddress).Spec.PoolRef; ours(ref) {
				return []string{ref.Name}
			}
			return nil
		}},
		{&capiipamv1beta2.IPAddress{}, IndexClaim, func(o client.Object) []string {
			if ip := o.(*capiipamv1beta2.IPAddress); ours(ip.Spec.PoolRef) {
				return nonEmpty(ip.Spec.ClaimRef.Name)
			}
			return nil
		}},
	} {
		if _, isCAPI := i.obj.(*capiipamv1beta2.IPAddress); isCAPI && !capi {
			continue
		}
		if err := idx.IndexField(ctx, i.obj, i.field, i.fn); err != nil && !strings.Contains(err.Error(), "conflict") {
			return err
		}
	}
	return nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
