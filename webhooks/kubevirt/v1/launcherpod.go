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

package v1

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
)

// Path is where the launcher-pod webhook is served. Its configuration is
// config/webhook/launcherpod.yaml, written by hand: controller-gen's webhook marker has no
// objectSelector, and without one every pod of the cluster would wait on this webhook.
const Path = "/mutate-kubevirt-io-v1-launcher-pod"

// What marks a virt-launcher pod and names its VMI.
const (
	DomainAnnotation = "kubevirt.io/domain"
	LauncherLabel    = "kubevirt.io"
	LauncherValue    = "virt-launcher"
	claimRefKey      = "ipam-claim-reference"
)

// LauncherPodWebhook adds "ipam-claim-reference: <vm>.<network>" to each network-selection
// element of a virt-launcher pod whose NAD uses rackwire's IPAM and allows persistent IPs,
// so that the CNI plugin hands the pod the claim's addresses instead of new ones.
//
// Its failure policy is Ignore, and only virt-launcher pods that ask for secondary networks
// are sent: no VM start waits on rackwire. A launcher pod admitted without its reference
// still gets its claim's addresses, because the CNI plugin then finds the claim itself. A
// pod whose claim belongs to another VM, was made for another NAD or is being deleted is
// refused, naming why. The handler reads the cache only (the VMI falls back to a live read
// when the cache has not seen it yet).
type LauncherPodWebhook struct {
	Client  client.Reader
	Live    client.Reader
	Decoder admission.Decoder
}

// Handle implements admission.Handler.
func (w LauncherPodWebhook) Handle(ctx context.Context, req admission.Request) admission.Response {
	pod := &corev1.Pod{}
	if err := w.Decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	vmName, ok := pod.Annotations[DomainAnnotation]
	raw := pod.Annotations[nadv1.NetworkAttachmentAnnot]
	if !ok || pod.Labels[LauncherLabel] != LauncherValue || strings.TrimSpace(raw) == "" {
		return admission.Allowed("not a virt-launcher pod with secondary networks")
	}
	elems, err := parseElements(raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("annotation %s: %w", nadv1.NetworkAttachmentAnnot, err))
	}
	ns := req.Namespace
	if ns == "" {
		ns = pod.Namespace
	}
	vmi, err := w.vmi(ctx, types.NamespacedName{Namespace: ns, Name: vmName})
	if apierrors.IsNotFound(err) {
		// virt-controller creates the VMI before its launcher pod.
		return admission.Denied(fmt.Sprintf("VirtualMachineInstance %s/%s not found: annotation %s names no running VM", ns, vmName, DomainAnnotation))
	}
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("reading VMI %s/%s of the launcher pod: %w", ns, vmName, err))
	}
	// A label and an annotation make no launcher pod: anyone who may create pods beside the
	// VM could write them and take the VM's address. virt-controller makes the VMI the pod's
	// controller; the claim's owner chain is checked against that VMI's UID.
	launcher := false
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "VirtualMachineInstance" && ref.APIVersion == virtv1.GroupVersion.String() {
		if ref.UID != vmi.UID && ref.Name == vmi.Name && w.Live != nil {
			// A VM restarted: virt-controller makes the new VMI's pod at once, before the
			// cache has seen the VMI of that name replaced.
			if err := w.Live.Get(ctx, client.ObjectKeyFromObject(vmi), vmi); err != nil {
				return admission.Errored(http.StatusInternalServerError, fmt.Errorf("reading VMI %s/%s of the launcher pod: %w", ns, vmName, err))
			}
		}
		launcher = ref.UID == vmi.UID
	}
	changed := false
	// KubeVirt writes one element per multus network, in the order of the VMI's networks: the
	// k-th element naming a NAD is the k-th network on it (two networks may share a NAD).
	seen := map[types.NamespacedName]int{}
	for _, e := range elems {
		name, _ := e["name"].(string)
		nsOf, _ := e["namespace"].(string)
		if nsOf == "" {
			nsOf = ns
		}
		key := types.NamespacedName{Namespace: nsOf, Name: name}
		network, ok := vmiNetworkAt(vmi, key, seen[key])
		seen[key]++
		if !ok {
			continue
		}
		persistent, err := w.persistent(ctx, types.NamespacedName{Namespace: nsOf, Name: name})
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		if !persistent {
			continue
		}
		if !launcher {
			return admission.Denied(fmt.Sprintf("the pod is not controlled by VirtualMachineInstance %s (UID %s): only its virt-launcher pods take "+
				"the addresses of VM %s/%s's IPAMClaims", vmi.Name, vmi.UID, ns, vmi.Name))
		}
		ref := ipamclaim.ClaimName(vmi.Name, network)
		if why, err := w.refuse(ctx, vmi, ns, ref, types.NamespacedName{Namespace: nsOf, Name: name}); err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		} else if why != "" {
			return admission.Denied(fmt.Sprintf("network %s of VM %s/%s: %s", network, ns, vmi.Name, why))
		}
		if e[claimRefKey] != ref {
			e[claimRefKey], changed = ref, true
		}
	}
	if !changed {
		return admission.Allowed("no persistent network")
	}
	out, err := json.Marshal(elems)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	key := strings.ReplaceAll(strings.ReplaceAll(nadv1.NetworkAttachmentAnnot, "~", "~0"), "/", "~1")
	return admission.Patched("IPAMClaim references of the VM's persistent networks",
		jsonpatch.NewOperation("replace", "/metadata/annotations/"+key, string(out)))
}

// parseElements reads the networks annotation: a JSON list (what KubeVirt writes; unknown
// keys are kept as they are) or Multus' "[<namespace>/]<name>[@<interface>]" list.
func parseElements(raw string) ([]map[string]any, error) {
	raw = strings.TrimSpace(raw)
	var elems []map[string]any
	if strings.HasPrefix(raw, "[") {
		if err := json.Unmarshal([]byte(raw), &elems); err != nil {
			return nil, err
		}
		return elems, nil
	}
	for _, item := range strings.Split(raw, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		e := map[string]any{}
		if rest, iface, ok := strings.Cut(item, "@"); ok {
			item, e["interface"] = rest, iface
		}
		if ns, name, ok := strings.Cut(item, "/"); ok {
			e["namespace"], item = ns, name
		}
		if item == "" {
			return nil, errors.New("an element without a network name")
		}
		e["name"] = item
		elems = append(elems, e)
	}
	return elems, nil
}

// vmiNetwork is the logical name of the VMI's first multus (non-default) network that uses nad.
func vmiNetwork(vmi *virtv1.VirtualMachineInstance, nad types.NamespacedName) (string, bool) {
	return vmiNetworkAt(vmi, nad, 0)
}

// vmiNetworkAt is the logical name of the VMI's k-th multus (non-default) network that uses nad.
func vmiNetworkAt(vmi *virtv1.VirtualMachineInstance, nad types.NamespacedName, k int) (string, bool) {
	for _, n := range vmi.Spec.Networks {
		if n.Multus == nil || n.Multus.Default {
			continue
		}
		key := types.NamespacedName{Namespace: vmi.Namespace, Name: n.Multus.NetworkName}
		if ns, name, ok := strings.Cut(n.Multus.NetworkName, "/"); ok {
			key = types.NamespacedName{Namespace: ns, Name: name}
		}
		if key == nad {
			if k == 0 {
				return n.Name, true
			}
			k--
		}
	}
	return "", false
}

func (w LauncherPodWebhook) vmi(ctx context.Context, key types.NamespacedName) (*virtv1.VirtualMachineInstance, error) {
	vmi := &virtv1.VirtualMachineInstance{}
	err := w.Client.Get(ctx, key, vmi)
	if apierrors.IsNotFound(err) && w.Live != nil {
		// virt-controller creates the VMI just before its pod: the cache may lag.
		err = w.Live.Get(ctx, key, vmi)
	}
	return vmi, err
}

// persistent says the NAD uses rackwire's IPAM and allows persistent IPs. A missing NAD is
// not: Multus fails such a pod anyway, and it is not this webhook's to refuse.
func (w LauncherPodWebhook) persistent(ctx context.Context, key types.NamespacedName) (bool, error) {
	nad := &nadv1.NetworkAttachmentDefinition{}
	if err := w.Client.Get(ctx, key, nad); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	n, err := cniconf.Parse([]byte(nad.Spec.Config))
	return err == nil && n.PersistentIPs, nil
}

// refuse says why the VM may not have the claim of that name, "" when it may (or the claim
// does not exist yet: the VM controller is making it, and the CNI plugin waits for it).
func (w LauncherPodWebhook) refuse(ctx context.Context, vmi *virtv1.VirtualMachineInstance, ns, name string,
	nad types.NamespacedName) (string, error) {
	key := types.NamespacedName{Namespace: ns, Name: name}
	claim := &ipamclaimsv1alpha1.IPAMClaim{}
	if err := w.Client.Get(ctx, key, claim); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	why := refusal(claim, vmi, nad)
	if why == "" || w.Live == nil {
		return why, nil
	}
	// A refusal read from the cache may be of a claim replaced since: a VM created again
	// gets a claim of the same name as soon as the earlier one goes, and starts at once.
	if err := w.Live.Get(ctx, key, claim); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return refusal(claim, vmi, nad), nil
}

func refusal(claim *ipamclaimsv1alpha1.IPAMClaim, vmi *virtv1.VirtualMachineInstance, nad types.NamespacedName) string {
	if why := ipamclaim.Refusal(claim, vmi.Name, nad.String()); why != "" {
		return why
	}
	// A name is not an owner: a VM deleted and created again finds the earlier VM's claim
	// until the garbage collector deletes it, and its address is released then.
	if ref := metav1.GetControllerOf(claim); ref.UID != vmi.UID && !ownedBy(vmi, ref.UID) {
		return fmt.Sprintf("IPAMClaim %s belongs to an earlier %s %s (UID %s); the pod can start once it is gone and the VM has its own",
			claim.Name, ref.Kind, ref.Name, ref.UID)
	}
	return ""
}

func ownedBy(vmi *virtv1.VirtualMachineInstance, uid types.UID) bool {
	ref := metav1.GetControllerOf(vmi)
	return ref != nil && ref.UID == uid
}
