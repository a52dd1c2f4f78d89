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

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// +kubebuilder:webhook:path=/validate-ipam-metal3-io-v1alpha1-ipclaim,mutating=false,failurePolicy=fail,sideEffects=None,groups=ipam.metal3.io,resources=ipclaims,verbs=create;update,versions=v1alpha1,name=vipclaim-v1alpha1.ipam.metal3.io,admissionReviewVersions=v1

// IPClaimWebhook keeps an IPClaim's spec as created: a claim that moved to another pool
// would keep an address of the first one.
type IPClaimWebhook struct{}

var _ admission.Validator[*ipamv1alpha1.IPClaim] = IPClaimWebhook{}

func setupIPClaim(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &ipamv1alpha1.IPClaim{}).WithValidator(IPClaimWebhook{}).Complete()
}

// ValidateCreate checks a new object.
func (IPClaimWebhook) ValidateCreate(context.Context, *ipamv1alpha1.IPClaim) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate checks a change.
func (IPClaimWebhook) ValidateUpdate(_ context.Context, old, claim *ipamv1alpha1.IPClaim) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, claim.Spec) {
		return nil, nil
	}
	return nil, invalid(kindIPClaim, claim.Name, field.ErrorList{
		field.Forbidden(field.NewPath("spec"), "is immutable; delete the claim and create a new one"),
	})
}

// ValidateDelete allows every deletion: the reconcilers hold back, with finalizers, what must not go yet.
func (IPClaimWebhook) ValidateDelete(context.Context, *ipamv1alpha1.IPClaim) (admission.Warnings, error) {
	return nil, nil
}
