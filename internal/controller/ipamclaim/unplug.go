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
	"encoding/json"
	"strings"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What marks a virt-launcher pod and names its VMI (KubeVirt's own keys).
const (
	launcherLabel    = "kubevirt.io"
	launcherValue    = "virt-launcher"
	domainAnnotation = "kubevirt.io/domain"
)

// unplug deletes the claim of an interface marked absent (hot-unplug), if it is the owner's,
// once nothing uses it any more: marking the interface absent in the VM's template starts
// the unplug, and until the VMI and every launcher pod have let the network go the address
// is still the VM's. busy says it is still in use.
func (r *VMReconciler) unplug(ctx context.Context, owner client.Object, vmi *virtv1.VirtualMachineInstance,
	network string, nad types.NamespacedName, name string) (busy bool, err error) {
	claim := &ipamclaimsv1alpha1.IPAMClaim{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: owner.GetNamespace(), Name: name}, claim); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if !controlledBy(claim, owner.GetUID()) && (vmi == nil || !controlledBy(claim, vmi.UID)) {
		return false, nil
	}
	if busy, err := r.inUse(ctx, owner, vmi, network, nad); busy || err != nil {
		return busy, err
	}
	if err := r.dropFinalizer(ctx, claim); err != nil {
		return false, err
	}
	if !claim.DeletionTimestamp.IsZero() {
		return false, nil
	}
	if err := r.Delete(ctx, claim, client.Preconditions{UID: &claim.UID}); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	r.Recorder.Eventf(owner, claim, corev1.EventTypeNormal, ReasonClaimDeleted, eventActionPersistentIP,
		"IPAMClaim %s deleted: interface %s is absent and no longer in use", name, network)
	return false, nil
}

// inUse says the VMI still has the network (its spec asks for it, or its status still lists
// the interface) or a launcher pod of the VM still names the NAD (its selection or its
// network-status annotation: Multus has not run DEL yet).
func (r *VMReconciler) inUse(ctx context.Context, owner client.Object, vmi *virtv1.VirtualMachineInstance,
	network string, nad types.NamespacedName) (bool, error) {
	if vmi != nil {
		for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
			if iface.Name == network && iface.State != virtv1.InterfaceStateAbsent {
				return true, nil
			}
		}
		for _, st := range vmi.Status.Interfaces {
			if st.Name == network {
				return true, nil
			}
		}
	}
	var pods corev1.PodList
	if err := r.Live.List(ctx, &pods, client.InNamespace(owner.GetNamespace()),
		client.MatchingLabels{launcherLabel: launcherValue}); err != nil {
		return false, err
	}
	// Other networks of the VM that stay on the NAD account for as many of a pod's attachments
	// to it: two networks may share a NAD, and the one staying must not hold the other's claim.
	others := staying(owner, vmi, network, nad)
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Annotations[domainAnnotation] != owner.GetName() || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if namesNAD(p, nad, others) {
			return true, nil
		}
	}
	return false, nil
}

// staying counts the networks other than network that use nad and are not being unplugged,
// in the VMI's spec (the VM's template when it has no VMI).
func staying(owner client.Object, vmi *virtv1.VirtualMachineInstance, network string, nad types.NamespacedName) int {
	var spec *virtv1.VirtualMachineInstanceSpec
	switch o := owner.(type) {
	case *virtv1.VirtualMachine:
		if o.Spec.Template != nil {
			spec = &o.Spec.Template.Spec
		}
	case *virtv1.VirtualMachineInstance:
		spec = &o.Spec
	}
	if vmi != nil {
		spec = &vmi.Spec
	}
	if spec == nil {
		return 0
	}
	n := 0
	for _, netw := range spec.Networks {
		if netw.Name != network && netw.Multus != nil && !netw.Multus.Default &&
			nadKey(owner.GetNamespace(), netw.Multus.NetworkName) == nad && !absent(spec, netw.Name) {
			n++
		}
	}
	return n
}

// namesNAD reads a pod's network selection and network status for more attachments to the NAD
// than the others that stay. An annotation that does not parse counts as naming it: the
// address is kept rather than freed on a guess.
func namesNAD(p *corev1.Pod, nad types.NamespacedName, others int) bool {
	selected, reported := 0, 0
	if raw := strings.TrimSpace(p.Annotations[nadv1.NetworkAttachmentAnnot]); raw != "" {
		var elems []nadv1.NetworkSelectionElement
		if !strings.HasPrefix(raw, "[") {
			for _, item := range strings.Split(raw, ",") {
				item, _, _ = strings.Cut(strings.TrimSpace(item), "@")
				if nadKey(p.Namespace, item) == nad {
					selected++
				}
			}
		} else if err := json.Unmarshal([]byte(raw), &elems); err != nil {
			return true
		}
		for _, e := range elems {
			ns := e.Namespace
			if ns == "" {
				ns = p.Namespace
			}
			if (types.NamespacedName{Namespace: ns, Name: e.Name}) == nad {
				selected++
			}
		}
	}
	if raw := strings.TrimSpace(p.Annotations[nadv1.NetworkStatusAnnot]); raw != "" {
		var status []nadv1.NetworkStatus
		if err := json.Unmarshal([]byte(raw), &status); err != nil {
			return true
		}
		for _, s := range status {
			if nadKey(p.Namespace, s.Name) == nad {
				reported++
			}
		}
	}
	return selected > others || reported > others
}
