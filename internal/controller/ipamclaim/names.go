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

package ipamclaim

import (
	"strings"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rackwire/rackwire/internal/cniconf"
)

// Names shared with the CNI plugin and with kubevirt/ipam-extensions.
const (
	// Finalizer is rackwire's on every claim it allocates: the claim's addresses are released
	// before it goes, even when the manager was down when it was deleted.
	Finalizer = "rackwire.metal3.io/ipamclaim"
	// VMFinalizer is ipam-extensions' finalizer: the VM claim controller removes it only once
	// the VM is being deleted and its VMI is gone.
	VMFinalizer = "kubevirt.io/persistent-ipam"
	// VMLabel names the VM (or VMI) a claim is for (KubeVirt's kubevirt.io/vm).
	VMLabel = cniconf.ClaimVMLabel
	// NADAnnotation records on a claim the NetworkAttachmentDefinition its VM names.
	NADAnnotation = cniconf.ClaimNADAnnotation

	// Labels of the OverlappingRangeIPReservations that hold a claim's addresses.
	LabelClaim          = "rackwire.metal3.io/ipamclaim"
	LabelClaimNamespace = "rackwire.metal3.io/ipamclaim-namespace"
	LabelManagedBy      = "app.kubernetes.io/managed-by"
	managedBy           = "rackwire"
)

// ClaimName is the IPAMClaim of a VM's network, as ipam-extensions names it:
// "<vm>.<logical network name>" lowercased, every run of characters outside [a-z0-9-] a
// dot, dashes trimmed from the runs' ends, at most 253 characters (and, unlike
// ipam-extensions, never ending in "." or "-" once cut, so the name stays valid).
func ClaimName(vm, network string) string {
	runs := strings.FieldsFunc(strings.ToLower(vm+"."+network), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-'
	})
	parts := make([]string, 0, len(runs))
	for _, r := range runs {
		if r = strings.Trim(r, "-"); r != "" {
			parts = append(parts, r)
		}
	}
	name := strings.Join(parts, ".")
	if len(name) > 253 {
		name = strings.TrimRight(name[:253], ".-")
	}
	return name
}

// Refusal says why a launcher pod of VM vm on NAD nad ("<namespace>/<name>") may not take the
// claim's addresses; "" when it may.
func Refusal(claim *ipamclaimsv1alpha1.IPAMClaim, vm, nad string) string {
	c := cniconf.Claim{
		Name: claim.Name, Deleting: !claim.DeletionTimestamp.IsZero(),
		VM: claim.Labels[VMLabel], NAD: claim.Annotations[NADAnnotation],
	}
	if ref := metav1.GetControllerOf(claim); ref != nil && kubevirtOwner(ref) {
		c.Controller, c.ControllerKind = ref.Name, ref.Kind
	}
	return c.Refusal(vm, nad)
}
