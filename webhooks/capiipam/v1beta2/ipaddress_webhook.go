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

// +kubebuilder:webhook:path=/validate-ipam-cluster-x-k8s-io-v1beta2-ipaddress,mutating=false,failurePolicy=fail,sideEffects=None,groups=ipam.cluster.x-k8s.io,resources=ipaddresses,verbs=create;update,versions=v1beta2,name=vipaddress-v1beta2.ipam.metal3.io,admissionReviewVersions=v1

// IPAddressWebhook keeps an address's spec as created: the contract promises consumers
// that the address of a claim never changes.
type IPAddressWebhook struct{}

var _ admission.Validator[*capiipamv1beta2.IPAddress] = IPAddressWebhook{}

func setupIPAddress(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &capiipamv1beta2.IPAddress{}).WithValidator(IPAddressWebhook{}).Complete()
}

// ValidateCreate checks a new object.
func (IPAddressWebhook) ValidateCreate(context.Context, *capiipamv1beta2.IPAddress) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate checks a change.
func (IPAddressWebhook) ValidateUpdate(_ context.Context, old, ip *capiipamv1beta2.IPAddress) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, ip.Spec) {
		return nil, nil
	}
	return nil, apierrors.NewInvalid(capiipamv1beta2.GroupVersion.WithKind("IPAddress").GroupKind(), ip.Name, field.ErrorList{
		field.Forbidden(field.NewPath("spec"), "is immutable; delete the claim to release the address"),
	})
}

// ValidateDelete allows every deletion: the reconcilers hold back, with finalizers, what must not go yet.
func (IPAddressWebhook) ValidateDelete(context.Context, *capiipamv1beta2.IPAddress) (admission.Warnings, error) {
	return nil, nil
}
