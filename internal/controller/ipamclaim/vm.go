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
	ReasonClaimCreated      = "IPAMClaimCreated"
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
	// StaleRetry is how often a VM whose claim name is still held by an old VM's claim
	// looks again, beyond the wake-up the old claim's deletion gives it.
	StaleRetry time.Duration
}

// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachines;virtualmachineinstances,verbs=get;list;watch
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachines/finalizers;virtualmachineinstances/finalizers,verbs=update
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=ipamclaims,verbs=create;delete

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
	for _, netw := range spec.Networks {
		if netw.Multus == nil || netw.Multus.Default {
			continue
		}
		name := ClaimName(req.Name, netw.Name)
		if absent(spec, netw.Name) {
			if err := r.unplug(ctx, owner, name); err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		conf, ok, err := r.persistentNetwork(ctx, owner, netw.Multus.NetworkName)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !ok {
			continue
		}
		stale, err := r.ensureClaim(ctx, owner, vmi, name, conf)
		if err != nil {
			return ctrl.Result{}, err
		}
		if stale {
			result = ctrl.Result{RequeueAfter: r.StaleRetry}
		}
	}
	return result, nil
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
func (r *VMReconciler) persistentNetwork(ctx context.Context, owner client.Object, networkName string) (cniconf.Network, bool, error) {
	nad := &nadv1.NetworkAttachmentDefinition{}
	key := nadKey(owner.GetNamespace(), networkName)
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

// ensureClaim creates the claim if it does not exist; stale says one of that name belongs
// to another owner (an old VM of that name, until the garbage collector removes it).
func (r *VMReconciler) ensureClaim(ctx context.Context, owner client.Object, vmi *virtv1.VirtualMachineInstance,
	name string, n cniconf.Network) (stale bool, err error) {
	existing := &ipamclaimsv1alpha1.IPAMClaim{}
	err = r.Get(ctx, types.NamespacedName{Namespace: owner.GetNamespace(), Name: name}, existing)
	if apierrors.IsNotFound(err) {
		return false, r.createClaim(ctx, owner, name, n)
	}
	if err != nil {
		return false, err
	}
	ref := metav1.GetControllerOf(existing)
	switch {
	case ref != nil && ref.UID == owner.GetUID():
		return false, nil
	case ref != nil && vmi != nil && ref.UID == vmi.UID:
		return false, nil // created while the VMI ran alone; the VM's own VMI keeps it
	}
	old := "none"
	if ref != nil {
		old = string(ref.UID)
	}
	r.Recorder.Eventf(owner, existing, corev1.EventTypeWarning, ReasonClaimOfAnotherVM, eventActionPersistentIP,
		"IPAMClaim %s belongs to owner UID %s, not to this one: neither adopted nor deleted; waiting for it to go", name, old)
	// The old owner is gone (names are unique) unless the VMI of this name is still the old
	// VM's: then its address is in use and its finalizer stays.
	if ref != nil && (vmi == nil || (vmi.UID != ref.UID && !controlledBy(vmi, ref.UID))) {
		if err := r.dropFinalizer(ctx, existing); err != nil {
			return true, err
		}
	}
	return true, nil
}

func controlledBy(obj client.Object, uid types.UID) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == uid
}

func (r *VMReconciler) createClaim(ctx context.Context, owner client.Object, name string, n cniconf.Network) error {
	kind := "VirtualMachine"
	if _, ok := owner.(*virtv1.VirtualMachineInstance); ok {
		kind = "VirtualMachineInstance"
	}
	claim := &ipamclaimsv1alpha1.IPAMClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: owner.GetNamespace(),
			Labels:    map[string]string{VMLabel: owner.GetName()},
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
	r.Recorder.Eventf(owner, claim, corev1.EventTypeNormal, ReasonClaimCreated, eventActionPersistentIP,
		"IPAMClaim %s created for network %s", name, n.Name)
	return nil
}

// unplug deletes the claim of an interface marked absent (hot-unplug), if it is the
// owner's: its address goes back to the network.
func (r *VMReconciler) unplug(ctx context.Context, owner client.Object, name string) error {
	claim := &ipamclaimsv1alpha1.IPAMClaim{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: owner.GetNamespace(), Name: name}, claim); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !controlledBy(claim, owner.GetUID()) {
		return nil
	}
	if err := r.dropFinalizer(ctx, claim); err != nil {
		return err
	}
	if !claim.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := r.Delete(ctx, claim, client.Preconditions{UID: &claim.UID}); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.Recorder.Eventf(owner, claim, corev1.EventTypeNormal, ReasonClaimDeleted, eventActionPersistentIP,
		"IPAMClaim %s deleted: its interface is absent", name)
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
