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

package v1beta2

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"

	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/webhooks/immutable"
)

// +kubebuilder:webhook:path=/validate-ipam-cluster-x-k8s-io-v1beta2-ipaddressclaim,mutating=false,failurePolicy=ignore,sideEffects=None,groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=update,versions=v1beta2,name=vipaddressclaim-v1beta2.ipam.metal3.io,admissionReviewVersions=v1

// The webhook judges only objects of rackwire's pools and ignores its own failure: the
// apiserver cannot select by spec.poolRef, and a rackwire that is down must not block the
// claims and addresses of other IPAM providers (Cluster API's own webhooks still guard
// every object's immutability).

// setupIPAddressClaim registers the validator that keeps a claim's spec as created, as the
// contract says: a new address takes a new claim.
// Only updates are sent to it: every create is valid, and a webhook call on each create
// of a claim or an address cost the apiserver and the manager a round trip per claim for
// nothing (test/bench).
// The defaulter puts the claim finalizer on claims of rackwire's pools where the apiserver
// does not serve config/ipam/claim-finalizer-policy.yaml; config/webhook/claims.yaml sends
// it no claim the policy decided (see ipam.FinalizeNewIPAddressClaim).
func setupIPAddressClaim(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &capiipamv1beta2.IPAddressClaim{}).WithDefaulter(finalizeIPAddressClaim{}).WithValidator(immutable.Spec[*capiipamv1beta2.IPAddressClaim]{
		Kind:    capiipamv1beta2.GroupVersion.WithKind("IPAddressClaim").GroupKind(),
		SpecOf:  func(o *capiipamv1beta2.IPAddressClaim) any { return o.Spec },
		Judges:  func(o *capiipamv1beta2.IPAddressClaim) bool { return ipam.OursRef(o.Spec.PoolRef) },
		Instead: "delete the claim and create a new one",
	}).Complete()
}

type finalizeIPAddressClaim struct{}

// Default never fails: a refusal would not be ignored, and the reconciler adds the
// finalizer to a claim that comes without it.
func (finalizeIPAddressClaim) Default(_ context.Context, claim *capiipamv1beta2.IPAddressClaim) error {
	ipam.FinalizeNewIPAddressClaim(claim)
	return nil
}
