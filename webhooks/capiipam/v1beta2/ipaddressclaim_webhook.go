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

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// +kubebuilder:webhook:path=/validate-ipam-cluster-x-k8s-io-v1beta2-ipaddressclaim,mutating=false,failurePolicy=fail,sideEffects=None,groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=create;update,versions=v1beta2,name=vipaddressclaim-v1beta2.ipam.metal3.io,admissionReviewVersions=v1

// IPAddressClaimWebhook keeps a claim's spec as created, as the contract says: a new
// address takes a new claim.
type IPAddressClaimWebhook struct{}

var _ admission.Validator[*capiipamv1beta2.IPAddressClaim] = IPAddressClaimWebhook{}

func setupIPAddressClaim(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &capiipamv1beta2.IPAddressClaim{}).WithValidator(IPAddressClaimWebhook{}).Complete()
}

// ValidateCreate checks a new object.
func (IPAddressClaimWebhook) ValidateCreate(context.Context, *capiipamv1beta2.IPAddressClaim) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate checks a change.
func (IPAddressClaimWebhook) ValidateUpdate(_ context.Context, old, claim *capiipamv1beta2.IPAddressClaim) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, claim.Spec) {
		return nil, nil
	}
	return nil, apierrors.NewInvalid(capiipamv1beta2.GroupVersion.WithKind("IPAddressClaim").GroupKind(), claim.Name, field.ErrorList{
		field.Forbidden(field.NewPath("spec"), "is immutable; delete the claim and create a new one"),
	})
}

// ValidateDelete allows every deletion: the reconcilers hold back, with finalizers, what must not go yet.
func (IPAddressClaimWebhook) ValidateDelete(context.Context, *capiipamv1beta2.IPAddressClaim) (admission.Warnings, error) {
	return nil, nil
}
