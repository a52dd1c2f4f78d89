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
	ctrl "sigs.k8s.io/controller-runtime"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/webhooks/immutable"
)

// +kubebuilder:webhook:path=/validate-ipam-metal3-io-v1alpha1-ipaddress,mutating=false,failurePolicy=fail,sideEffects=None,groups=ipam.metal3.io,resources=ipaddresses,verbs=update,versions=v1alpha1,name=vipaddress-v1alpha1.ipam.metal3.io,admissionReviewVersions=v1

// setupIPAddress registers the validator that keeps an IPAddress's spec as created: the address
// is the source of truth of an allocation, and a changed one would hand out an address twice.
// Only updates are sent to it: every create is valid, and a webhook call on each create
// of a claim or an address cost the apiserver and the manager a round trip per claim for
// nothing (test/bench).
func setupIPAddress(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &ipamv1alpha1.IPAddress{}).WithValidator(immutable.Spec[*ipamv1alpha1.IPAddress]{
		Kind:    kindIPAddress,
		SpecOf:  func(o *ipamv1alpha1.IPAddress) any { return o.Spec },
		Instead: "delete its claim to release the address",
	}).Complete()
}
