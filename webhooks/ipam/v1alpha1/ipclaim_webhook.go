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

package v1alpha1

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/webhooks/immutable"
)

// +kubebuilder:webhook:path=/validate-ipam-metal3-io-v1alpha1-ipclaim,mutating=false,failurePolicy=fail,sideEffects=None,groups=ipam.metal3.io,resources=ipclaims,verbs=update,versions=v1alpha1,name=vipclaim-v1alpha1.ipam.metal3.io,admissionReviewVersions=v1

// setupIPClaim registers the validator that keeps an IPClaim's spec as created: a claim that
// moved to another pool would keep an address of the first one.
// Only updates are sent to it: every create is valid, and a webhook call on each create
// of a claim or an address cost the apiserver and the manager a round trip per claim for
// nothing (test/bench).
// The defaulter puts the claim finalizer on where the apiserver does not serve
// config/ipam/claim-finalizer-policy.yaml; config/webhook/claims.yaml sends it no claim the
// policy decided (see ipam.FinalizeNewIPClaim). Its failure is ignored, since the reconciler
// then adds the finalizer itself.
func setupIPClaim(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &ipamv1alpha1.IPClaim{}).WithDefaulter(finalizeIPClaim{}).WithValidator(immutable.Spec[*ipamv1alpha1.IPClaim]{
		Kind:    kindIPClaim,
		SpecOf:  func(o *ipamv1alpha1.IPClaim) any { return o.Spec },
		Instead: "delete the claim and create a new one",
	}).Complete()
}

type finalizeIPClaim struct{}

// Default never fails: a refusal would not be ignored, and the reconciler adds the
// finalizer to a claim that comes without it.
func (finalizeIPClaim) Default(_ context.Context, claim *ipamv1alpha1.IPClaim) error {
	ipam.FinalizeNewIPClaim(claim)
	return nil
}
