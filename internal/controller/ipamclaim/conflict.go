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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConditionClaimConflict is the VM condition (type) that names the persistent networks whose
// IPAMClaim the VM cannot have: True while there is one, gone once there is none.
const ConditionClaimConflict virtv1.VirtualMachineConditionType = "IPAMClaimConflict"

// ReasonClaimConflict is the Event (on both VMs) and the condition's reason.
const ReasonClaimConflict = "IPAMClaimConflict"

// conflict is a VM network whose claim the VM cannot have.
type conflict struct {
	claim   string
	network string // the VM's logical network
	// Another owner holds the claim (nil: nobody controls it); otherNetwork is its spec.network.
	other        *metav1.OwnerReference
	otherNetwork string
	// Or the VM's own claim was made for another NAD than the one the VM names now.
	otherNAD, nad string
}

func (c conflict) String() string {
	switch {
	case c.otherNAD != "":
		return fmt.Sprintf("network %s: IPAMClaim %s was made for NetworkAttachmentDefinition %s, the VM now names %s; delete the claim (its address goes) to get one from %s",
			c.network, c.claim, c.otherNAD, c.nad, c.nad)
	case c.other == nil:
		return fmt.Sprintf("network %s: IPAMClaim %s (network %s) exists and no VM controls it; it is not used", c.network, c.claim, c.otherNetwork)
	default:
		return fmt.Sprintf("network %s: IPAMClaim %s belongs to %s %s (network %s); rename the VM or the network so that their claim names differ",
			c.network, c.claim, c.other.Kind, c.other.Name, c.otherNetwork)
	}
}

// reportConflicts sends an Event per conflict on the VM and on the other VM, and sets or
// clears the VM's IPAMClaimConflict condition. A VMI running without a VM gets the Events
// only: its status is virt-handler's.
func (r *VMReconciler) reportConflicts(ctx context.Context, owner client.Object, conflicts []conflict) error {
	msgs := make([]string, 0, len(conflicts))
	for _, c := range conflicts {
		msgs = append(msgs, c.String())
		r.Recorder.Eventf(owner, nil, corev1.EventTypeWarning, ReasonClaimConflict, eventActionPersistentIP, "%s", c.String())
		if c.other != nil && kubevirtOwner(c.other) {
			r.Recorder.Eventf(otherOwner(owner.GetNamespace(), c.other), nil, corev1.EventTypeWarning, ReasonClaimConflict, eventActionPersistentIP,
				"%s %s (network %s) also maps to IPAMClaim %s, which stays this VM's", kindOf(owner), owner.GetName(), c.network, c.claim)
		}
	}
	vm, ok := owner.(*virtv1.VirtualMachine)
	if !ok {
		return nil
	}
	i := slices.IndexFunc(vm.Status.Conditions, func(c virtv1.VirtualMachineCondition) bool { return c.Type == ConditionClaimConflict })
	want := strings.Join(msgs, "; ")
	if (len(msgs) == 0 && i < 0) || (i >= 0 && vm.Status.Conditions[i].Message == want) {
		return nil
	}
	patch := client.MergeFromWithOptions(vm.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if len(msgs) == 0 {
		vm.Status.Conditions = slices.Delete(vm.Status.Conditions, i, i+1)
	} else {
		c := virtv1.VirtualMachineCondition{
			Type: ConditionClaimConflict, Status: corev1.ConditionTrue, Reason: ReasonClaimConflict,
			Message: want, LastTransitionTime: metav1.Now(),
		}
		if i < 0 {
			vm.Status.Conditions = append(vm.Status.Conditions, c)
		} else {
			vm.Status.Conditions[i] = c
		}
	}
	// The lock keeps virt-controller's concurrent status writes: a conflict is retried.
	return client.IgnoreNotFound(r.Status().Patch(ctx, vm, patch))
}

// otherOwner is an object the Event recorder can point at, for the owner a reference names.
func otherOwner(namespace string, ref *metav1.OwnerReference) client.Object {
	meta := metav1.ObjectMeta{Namespace: namespace, Name: ref.Name, UID: ref.UID}
	if ref.Kind == "VirtualMachineInstance" {
		return &virtv1.VirtualMachineInstance{ObjectMeta: meta}
	}
	return &virtv1.VirtualMachine{ObjectMeta: meta}
}

func kindOf(obj client.Object) string {
	if _, ok := obj.(*virtv1.VirtualMachineInstance); ok {
		return "VirtualMachineInstance"
	}
	return "VirtualMachine"
}
