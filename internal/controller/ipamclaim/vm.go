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
	"errors"
	"strings"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rackwire/rackwire/internal/cniconf"
)

// Event reasons on VMs (and VMIs without a VM).
const (
	ReasonClaimDeleted      = "IPAMClaimDeleted"
	ReasonClaimOfAnotherVM  = "IPAMClaimOwnedByAnotherVM"
	ReasonClaimsLetGo       = "IPAMClaimsReleased"
	reasonNADNotFound       = "NetworkAttachmentDefinitionNotFound"
	eventActionPersistentIP = "PersistentIPs"
)

// VMReconciler keeps an IPAMClaim for each persistent network of every VM: what
// kubevirt/ipam-extensions does, for rackwire's networks.
type VMReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// Live lists the launcher pods of a VM whose interface is being unplugged (the cache holds
	// no pods), and says whether a VM the cache does not show is really gone.
	Live client.Reader
	// StaleRetry is how often a VM whose claim name is still held by an old VM's claim
	// looks again, beyond the wake-up the old claim's deletion gives it.
	StaleRetry time.Duration
	// UnplugRetry is how often a VM whose unplugged interface is still in use looks again:
	// a launcher pod's annotations change without waking it.
	UnplugRetry time.Duration
}

// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachines;virtualmachineinstances,verbs=get;list;watch
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachines/finalizers;virtualmachineinstances/finalizers,verbs=update
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=ipamclaims,verbs=create;delete
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachines/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list

// Reconcile handles the VM and the VMI of one name.
func (r *VMReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	vm := &virtv1.VirtualMachine{}
	if err := r.Get(ctx, req.NamespacedName, vm); apierrors.IsNotFound(err) {
		vm = nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	vmi := &virtv1.VirtualMachineInstance{}
	if err := r.Get(ctx, req.NamespacedName, vmi); apierrors.IsNotFound(err) {
		vmi = nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	var owner client.Object
	var spec *virtv1.VirtualMachineInstanceSpec
	switch {
	case vm == nil && vmi == nil:
		// A claim's event can come before the cache shows the VM it is for (ipam-extensions
		// makes it right after the VM; the informers keep no order between them): only a live
		// read says the VM is gone. Taken for gone, its claim would lose the VM's finalizer.
		if there, err := r.existsLive(ctx, req.NamespacedName); err != nil || there {
			return ctrl.Result{}, err // the VM's own event, once cached, brings it back
		}
		return ctrl.Result{}, r.letGo(ctx, req.NamespacedName, nil)
	case vm != nil && !vm.DeletionTimestamp.IsZero():
		// Only once the VMI is gone: a foreground deletion removes the claims while the VM
		// still runs, and the finalizer keeps their addresses until it stops.
		if vmi == nil {
			return ctrl.Result{}, r.letGo(ctx, req.NamespacedName, vm)
		}
		return ctrl.Result{}, nil
	case vm != nil:
		if vm.Spec.Template == nil {
			return ctrl.Result{}, nil
		}
		owner, spec = vm, &vm.Spec.Template.Spec
	case !vmi.DeletionTimestamp.IsZero():
		if len(vmi.Status.ActivePods) == 0 {
			return ctrl.Result{}, r.letGo(ctx, req.NamespacedName, vmi)
		}
		return ctrl.Result{}, nil
	default:
		owner, spec = vmi, &vmi.Spec
	}
	var result ctrl.Result
	later := func(d time.Duration) {
		if result.RequeueAfter == 0 || d < result.RequeueAfter {
			result.RequeueAfter = d
		}
	}
	var conflicts []conflict
	for _, netw := range spec.Networks {
		if netw.Multus == nil || netw.Multus.Default {
			continue
		}
		name := ClaimName(req.Name, netw.Name)
		nad := nadKey(owner.GetNamespace(), netw.Multus.NetworkName)
		if absent(spec, netw.Name) {
			busy, err := r.unplug(ctx, owner, vmi, netw.Name, nad, name)
			if err != nil {
				return ctrl.Result{}, err
			}
			if busy {
				later(r.UnplugRetry)
			}
			continue
		}
		conf, ok, err := r.persistentNetwork(ctx, owner, nad)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !ok {
			continue
		}
		st, err := r.ensureClaim(ctx, owner, vmi, name, nad, conf)
		if err != nil {
			return ctrl.Result{}, err
		}
		switch {
		case st.stale:
			later(r.StaleRetry)
		case st.conflict != nil:
			st.conflict.network = netw.Name
			conflicts = append(conflicts, *st.conflict)
		}
	}
	if err := r.reportConflicts(ctx, owner, conflicts); err != nil {
		return ctrl.Result{}, err
	}
	return result, nil
}

// existsLive reads the VM and the VMI of the name past the cache.
func (r *VMReconciler) existsLive(ctx context.Context, key types.NamespacedName) (bool, error) {
	for _, obj := range []client.Object{&virtv1.VirtualMachine{}, &virtv1.VirtualMachineInstance{}} {
		err := r.Live.Get(ctx, key, obj)
		if err == nil {
			return true, nil
		}
		if !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	return false, nil
}

func absent(spec *virtv1.VirtualMachineInstanceSpec, network string) bool {
	for _, iface := range spec.Domain.Devices.Interfaces {
		if iface.Name == network {
			return iface.State == virtv1.InterfaceStateAbsent
		}
	}
	return false
}

// nadKey reads a multus networkName: "<namespace>/<name>" or a name in the VM's namespace.
func nadKey(namespace, networkName string) types.NamespacedName {
	if ns, name, ok := strings.Cut(networkName, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: namespace, Name: networkName}
}

// persistentNetwork reads the NAD of a VM network: ok when it uses rackwire's IPAM and
// allows persistent IPs. Claims of other networks are left to whoever serves them.
func (r *VMReconciler) persistentNetwork(ctx context.Context, owner client.Object, key types.NamespacedName) (cniconf.Network, bool, error) {
	nad := &nadv1.NetworkAttachmentDefinition{}
	if err := r.Get(ctx, key, nad); err != nil {
		if apierrors.IsNotFound(err) {
			// The NAD's creation wakes the VM again.
			r.Recorder.Eventf(owner, nil, corev1.EventTypeWarning, reasonNADNotFound, eventActionPersistentIP,
				"NetworkAttachmentDefinition %s not found: no IPAMClaim for it yet", key)
			return cniconf.Network{}, false, nil
		}
		return cniconf.Network{}, false, err
	}
	n, err := cniconf.Parse([]byte(nad.Spec.Config))
	if errors.Is(err, cniconf.ErrNotRackwire) || !n.PersistentIPs || n.Name == "" {
		return n, false, nil
	}
	// A wrong range is reported on the claim by the allocator; the claim is still the VM's.
	return n, true, nil
}

// claimState is what ensureClaim found: stale says the claim's name is still held by an
// earlier VM of this name (until the garbage collector removes it); conflict says another VM
// (or someone else) holds it, which rackwire never takes over.
type claimState struct {
	stale    bool
	conflict *conflict
}

// ensureClaim creates the claim if it does not exist, and records on the VM's own claim the
// NAD it is for. A claim of that name that another owner holds is never adopted, deleted or
// let go: claim names are "<vm>.<network>" with every other character a dot, so VM "db" on
// network "prod_net" and VM "db.prod" on network "net" both want "db.prod.net".
func (r *VMReconciler) ensureClaim(ctx context.Context, owner client.Object, vmi *virtv1.VirtualMachineInstance,
	name string, nad types.NamespacedName, n cniconf.Network) (claimState, error) {
	existing := &ipamclaimsv1alpha1.IPAMClaim{}
	err := r.Get(ctx, types.NamespacedName{Namespace: owner.GetNamespace(), Name: name}, existing)
	if apierrors.IsNotFound(err) {
		return claimState{}, r.createClaim(ctx, owner, name, nad, n)
	}
	if err != nil {
		return claimState{}, err
	}
	ref := metav1.GetControllerOf(existing)
	if ref != nil && (ref.UID == owner.GetUID() || (vmi != nil && ref.UID == vmi.UID)) {
		// Ours (or made while the VM's own VMI ran alone, which keeps it).
		if !existing.DeletionTimestamp.IsZero() {
			return r.deletedByHand(ctx, owner, vmi, existing, nad)
		}
		return r.recordNAD(ctx, existing, nad)
	}
	if ref == nil || !kubevirtOwner(ref) || ref.Name != owner.GetName() {
		// Another VM's claim, or one nobody controls: not ours to touch.
		return claimState{conflict: &conflict{claim: name, other: ref, otherNetwork: existing.Spec.Network}}, nil
	}
	r.Recorder.Eventf(owner, existing, corev1.EventTypeWarning, ReasonClaimOfAnotherVM, eventActionPersistentIP,
		"IPAMClaim %s belongs to an earlier %s %s (UID %s): neither adopted nor deleted; waiting for it to go",
		name, ref.Kind, ref.Name, ref.UID)
	// The earlier VM of this name is gone (names of one kind are unique in a namespace)
	// unless the VMI of this name is still the earlier VM's: then its address is in use and
	// its finalizer stays.
	if vmi == nil || (vmi.UID != ref.UID && !controlledBy(vmi, ref.UID)) {
		if err := r.dropFinalizer(ctx, existing); err != nil {
			return claimState{stale: true}, err
		}
	}
	return claimState{stale: true}, nil
}

// deletedByHand lets go of the VM's own claim that someone deleted (as the conflict condition
// advises when the VM now names another NAD) once nothing of the VM uses it: while the VMI or
// a launcher pod still has its address the finalizer keeps it; once the VM is stopped the claim
// goes, and its deletion wakes the VM, which makes a new one. Kept for ever, the claim would
// refuse every later launcher pod of the VM.
func (r *VMReconciler) deletedByHand(ctx context.Context, owner client.Object, vmi *virtv1.VirtualMachineInstance,
	claim *ipamclaimsv1alpha1.IPAMClaim, nad types.NamespacedName) (claimState, error) {
	if vmi != nil {
		return claimState{}, nil // the VMI's deletion wakes the VM again
	}
	used := nad
	if recorded, ok := recordedNAD(claim); ok {
		used = recorded
	}
	busy, err := r.inUse(ctx, owner, nil, "", used)
	if err != nil || busy {
		return claimState{stale: true}, err
	}
	return claimState{stale: true}, r.dropFinalizer(ctx, claim)
}

// recordNAD writes the NAD on a claim of the VM's that lacks it (made before rackwire recorded
// it). A claim made for another NAD than the VM names now is a conflict: its addresses come
// from that NAD's ranges, and the CNI plugin refuses it for a pod on another NAD.
func (r *VMReconciler) recordNAD(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim, nad types.NamespacedName) (claimState, error) {
	switch recorded := claim.Annotations[NADAnnotation]; recorded {
	case nad.String():
		return claimState{}, nil
	case "":
		patch := client.MergeFromWithOptions(claim.DeepCopy(), client.MergeFromWithOptimisticLock{})
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, NADAnnotation, nad.String())
		return claimState{}, client.IgnoreNotFound(r.Patch(ctx, claim, patch))
	default:
		return claimState{conflict: &conflict{claim: claim.Name, otherNAD: recorded, nad: nad.String()}}, nil
	}
}

func kubevirtOwner(ref *metav1.OwnerReference) bool {
	return ref.APIVersion == virtv1.GroupVersion.String() && (ref.Kind == "VirtualMachine" || ref.Kind == "VirtualMachineInstance")
}

func controlledBy(obj client.Object, uid types.UID) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == uid
}

func (r *VMReconciler) createClaim(ctx context.Context, owner client.Object, name string, nad types.NamespacedName, n cniconf.Network) error {
	kind := kindOf(owner)
	claim := &ipamclaimsv1alpha1.IPAMClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   owner.GetNamespace(),
			Labels:      map[string]string{VMLabel: owner.GetName()},
			Annotations: map[string]string{NADAnnotation: nad.String()},
			// rackwire's finalizer comes with the claim: one write less per VM.
			Finalizers: []string{VMFinalizer, Finalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: virtv1.GroupVersion.String(), Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: ipamclaimsv1alpha1.IPAMClaimSpec{Network: n.Name},
	}
	if err := r.Create(ctx, claim); err != nil {
		// AlreadyExists: the cache was behind; the claim's event brings the VM back.
		return client.IgnoreAlreadyExists(err)
	}
	// No Event: a burst of VMs would cost one per VM saying what the claim itself shows;
	// what goes wrong (conflicts, a missing NAD, exhaustion) is a Warning.
	return nil
}

// letGo removes the VM finalizer from the claims of a VM (or VMI) that is gone or being
// deleted with its VMI gone; the garbage collector then deletes them and rackwire releases
// their addresses.
func (r *VMReconciler) letGo(ctx context.Context, key types.NamespacedName, regarding client.Object) error {
	var claims ipamclaimsv1alpha1.IPAMClaimList
	if err := r.List(ctx, &claims, client.InNamespace(key.Namespace), client.MatchingLabels{VMLabel: key.Name}); err != nil {
		return err
	}
	n := 0
	for i := range claims.Items {
		if !controllerutil.ContainsFinalizer(&claims.Items[i], VMFinalizer) {
			continue
		}
		if err := r.dropFinalizer(ctx, &claims.Items[i]); err != nil {
			return err
		}
		n++
	}
	if n > 0 && regarding != nil {
		r.Recorder.Eventf(regarding, nil, corev1.EventTypeNormal, ReasonClaimsLetGo, eventActionPersistentIP,
			"%d IPAMClaim(s) no longer held: the VM is being deleted and its VMI is gone", n)
	}
	return nil
}

func (r *VMReconciler) dropFinalizer(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim) error {
	if !controllerutil.ContainsFinalizer(claim, VMFinalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(claim.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(claim, VMFinalizer)
	return client.IgnoreNotFound(r.Patch(ctx, claim, patch))
}
