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
	"context"
	"fmt"
	"strings"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fromVM says whether rackwire's VM controller made the claim, and why not: it is controlled
// by a VM or VMI of its namespace that exists with that UID, and that VM names the recorded
// NAD. Anyone who may create IPAMClaims could otherwise drain any network's range, from any
// namespace, with no VM at all.
func (r *ClaimReconciler) fromVM(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim) (string, error) {
	ref := metav1.GetControllerOf(claim)
	if ref == nil || !kubevirtOwner(ref) {
		return "no VirtualMachine or VirtualMachineInstance controls the claim: rackwire serves only the claims its VM controller makes", nil
	}
	nad, ok := recordedNAD(claim)
	if !ok {
		return fmt.Sprintf("annotation %s is missing: rackwire serves only the claims its VM controller makes", NADAnnotation), nil
	}
	key := types.NamespacedName{Namespace: claim.Namespace, Name: ref.Name}
	var owner client.Object
	var spec *virtv1.VirtualMachineInstanceSpec
	if ref.Kind == "VirtualMachine" {
		vm := &virtv1.VirtualMachine{}
		owner = vm
		if err := r.Get(ctx, key, vm); err == nil && vm.Spec.Template != nil {
			spec = &vm.Spec.Template.Spec
		} else if err != nil && !apierrors.IsNotFound(err) {
			return "", err
		}
	} else {
		vmi := &virtv1.VirtualMachineInstance{}
		owner = vmi
		if err := r.Get(ctx, key, vmi); err == nil {
			spec = &vmi.Spec
		} else if !apierrors.IsNotFound(err) {
			return "", err
		}
	}
	if spec == nil || owner.GetUID() != ref.UID {
		return fmt.Sprintf("its %s %s (UID %s) does not exist", ref.Kind, ref.Name, ref.UID), nil
	}
	// One claim per network of the VM, under the name the VM controller gives it: a VM's
	// UID is no secret to whoever may create claims beside it, and claims of other names
	// would each drain an address.
	var names []string
	for _, n := range spec.Networks {
		if n.Multus != nil && !n.Multus.Default && nadKey(claim.Namespace, n.Multus.NetworkName) == nad {
			want := ClaimName(ref.Name, n.Name)
			if want == claim.Name {
				return "", nil
			}
			names = append(names, want)
		}
	}
	if len(names) > 0 {
		return fmt.Sprintf("%s %s's claim for NetworkAttachmentDefinition %s is named %s, not %s", ref.Kind, ref.Name, nad,
			strings.Join(names, " or "), claim.Name), nil
	}
	return fmt.Sprintf("%s %s names no network on NetworkAttachmentDefinition %s", ref.Kind, ref.Name, nad), nil
}
