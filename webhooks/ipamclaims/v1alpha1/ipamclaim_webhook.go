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
	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/webhooks/immutable"
)

// +kubebuilder:webhook:path=/validate-k8s-cni-cncf-io-v1alpha1-ipamclaim,mutating=false,failurePolicy=ignore,sideEffects=None,groups=k8s.cni.cncf.io,resources=ipamclaims,verbs=update,versions=v1alpha1,name=vipamclaim-v1alpha1.rackwire.metal3.io,admissionReviewVersions=v1,timeoutSeconds=5

// Setup registers the validator that keeps the spec of rackwire's claims as created: its
// addresses were allocated in spec.network's ranges, and another network takes another claim.
// It judges only claims carrying rackwire's finalizer and ignores its own failure: the
// apiserver cannot select by finalizer, and a rackwire that is down must not block the
// claims of OVN-Kubernetes or other providers. Only updates are sent to it.
func Setup(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &ipamclaimsv1alpha1.IPAMClaim{}).WithValidator(immutable.Spec[*ipamclaimsv1alpha1.IPAMClaim]{
		Kind:   ipamclaimsv1alpha1.SchemeGroupVersion.WithKind("IPAMClaim").GroupKind(),
		SpecOf: func(o *ipamclaimsv1alpha1.IPAMClaim) any { return o.Spec },
		Judges: func(o *ipamclaimsv1alpha1.IPAMClaim) bool {
			return controllerutil.ContainsFinalizer(o, ipamclaim.Finalizer)
		},
		Instead: "delete the claim and create a new one",
	}).Complete()
}
