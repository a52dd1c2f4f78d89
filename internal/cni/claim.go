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

package cni

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	ipamclaims "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	current "github.com/containernetworking/cni/pkg/types/100"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
)

// What marks a virt-launcher pod and names its VM (KubeVirt's own keys).
const (
	launcherLabel    = "kubevirt.io"
	launcherValue    = "virt-launcher"
	domainAnnotation = "kubevirt.io/domain"
)

// selection is what the pod says of this attachment: its network-selection element's
// ipam-claim-reference and NAD ("<namespace>/<name>"), and the VM whose launcher it is.
type selection struct {
	ref, nad, vm string
	// vmiUID is the UID of the VMI controlling the pod ("" when none does).
	vmiUID string
}

// selected reads this attachment's network-selection element from the pod's
// k8s.v1.cni.cncf.io/networks annotation: the element whose interface is this ifname, else
// the one Multus names net<position>.
func (c *call) selected(ctx context.Context) (selection, error) {
	if c.podName == "" || c.podNS == "" {
		return selection{}, nil
	}
	pod := &metav1.PartialObjectMetadata{}
	if err := c.kube.get(ctx, "/api/v1/namespaces/"+c.podNS+"/pods/"+c.podName, pod); err != nil {
		return selection{}, fmt.Errorf("reading pod %s for its ipam-claim-reference: %w", c.podRef(), err)
	}
	if c.podUID == "" {
		c.podUID = string(pod.UID)
	}
	var sel selection
	if pod.Labels[launcherLabel] == launcherValue {
		sel.vm = pod.Annotations[domainAnnotation]
		if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "VirtualMachineInstance" {
			sel.vmiUID = string(ref.UID)
		}
	}
	raw := strings.TrimSpace(pod.Annotations[nadv1.NetworkAttachmentAnnot])
	var elems []nadv1.NetworkSelectionElement
	if strings.HasPrefix(raw, "[") {
		if err := json.Unmarshal([]byte(raw), &elems); err != nil {
			return sel, fmt.Errorf("pod %s: annotation %s: %w", c.podRef(), nadv1.NetworkAttachmentAnnot, err)
		}
	} else {
		// The short form ([<namespace>/]<name>[@<interface>]) carries no claim reference.
		for _, item := range strings.Split(raw, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			var e nadv1.NetworkSelectionElement
			item, e.InterfaceRequest, _ = strings.Cut(item, "@")
			if ns, name, ok := strings.Cut(item, "/"); ok {
				e.Namespace, item = ns, name
			}
			e.Name = item
			elems = append(elems, e)
		}
	}
	var e *nadv1.NetworkSelectionElement
	for i := range elems {
		if elems[i].InterfaceRequest == c.ifName {
			e = &elems[i]
		}
	}
	if n, ok := strings.CutPrefix(c.ifName, "net"); ok && e == nil {
		if i, err := strconv.Atoi(n); err == nil && i >= 1 && i <= len(elems) && elems[i-1].InterfaceRequest == "" {
			e = &elems[i-1]
		}
	}
	if e == nil {
		return sel, nil
	}
	ns := e.Namespace
	if ns == "" {
		ns = c.podNS
	}
	sel.ref, sel.nad = e.IPAMClaimReference, ns+"/"+e.Name
	return sel, nil
}

// claimOf is the claim whose addresses this attachment takes, "" for none. Without a
// reference (the launcher-pod webhook was down, or is not installed), a launcher pod's claim
// is the one of its VM recorded for this NAD: the plugin finds it itself, so no VM start
// waits on rackwire's webhook.
func (c *call) claimOf(ctx context.Context, sel selection) (string, error) {
	if sel.ref != "" || sel.vm == "" || sel.nad == "" {
		return sel.ref, nil
	}
	q := url.Values{"labelSelector": {cniconf.ClaimVMLabel + "=" + sel.vm}}
	path := "/apis/k8s.cni.cncf.io/v1alpha1/namespaces/" + c.podNS + "/ipamclaims?" + q.Encode()
	wait := 100 * time.Millisecond
	for {
		var list ipamclaims.IPAMClaimList
		if err := c.kube.get(ctx, path, &list); err != nil {
			return "", fmt.Errorf("pod %s: finding the IPAMClaim of VM %s for %s: %w", c.podRef(), sel.vm, sel.nad, err)
		}
		var recorded, unrecorded []string
		for i := range list.Items {
			cl := &list.Items[i]
			switch cl.Annotations[cniconf.ClaimNADAnnotation] {
			case sel.nad:
				recorded = append(recorded, cl.Name)
			case "":
				if cl.Spec.Network == c.cfg.Name {
					unrecorded = append(unrecorded, cl.Name)
				}
			}
		}
		switch {
		case len(recorded) == 1:
			return recorded[0], nil
		case len(recorded) > 1:
			// Two networks of the VM on one NAD: nothing here says which claim is this
			// interface's, and taking the first would give both interfaces one address.
			return "", fmt.Errorf("pod %s: IPAMClaims %s of VM %s all record NetworkAttachmentDefinition %s; "+
				"which is interface %s's is known only from an ipam-claim-reference (the launcher-pod webhook's)",
				c.podRef(), strings.Join(recorded, ", "), sel.vm, sel.nad, c.ifName)
		}
		if len(unrecorded) == 1 {
			return unrecorded[0], nil // made before rackwire recorded the NAD
		}
		// The VM controller makes the claim when the VM is created, well before its pod: wait
		// for it rather than hand the VM an address that is not its own.
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("network %q, pod %s: no IPAMClaim of VM %s records NetworkAttachmentDefinition %s (annotation %s)",
				c.cfg.Name, c.podRef(), sel.vm, sel.nad, cniconf.ClaimNADAnnotation)
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// addFromClaim answers ADD with the IPAMClaim's addresses, waiting for the manager to fill
// status.ips; it writes no pool entry, so DEL and GC cannot free them.
func (c *call) addFromClaim(ctx context.Context, name string, sel selection) (*current.Result, error) {
	claim, err := c.waitClaim(ctx, name, sel)
	if err != nil {
		c.event("IPAMClaimNotReady", err.Error())
		return nil, err
	}
	if err := c.st.Lock(); err != nil {
		return nil, err
	}
	defer c.st.Unlock()
	rec := &record{ContainerID: c.containerID, IfName: c.ifName, PodRef: c.podRef(), Claim: c.podNS + "/" + name, Network: c.cfg.Name, Gen: newGen()}
	if err := c.st.save(rec); err != nil {
		return nil, err
	}
	res := &current.Result{CNIVersion: current.ImplementedSpecVersion, Routes: c.cfg.Routes, DNS: c.cfg.DNS}
	for _, s := range claim.Status.IPs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("IPAMClaim %s/%s: status.ips %q: %w", c.podNS, name, s, err)
		}
		if err := c.takenFromClaim(ctx, name, p.Addr()); err != nil {
			c.event("IPAMClaimAddressTaken", err.Error())
			return nil, err
		}
		res.IPs = append(res.IPs, c.ipConfig(p.Addr(), p.Bits()))
	}
	return res, nil
}

// waitClaim reads the claim until the manager has given it addresses, with backoff, until
// ctx ends.
func (c *call) waitClaim(ctx context.Context, name string, sel selection) (*ipamclaims.IPAMClaim, error) {
	path := "/apis/k8s.cni.cncf.io/v1alpha1/namespaces/" + c.podNS + "/ipamclaims/" + name
	wait := 100 * time.Millisecond
	var last error
	for {
		claim := &ipamclaims.IPAMClaim{}
		err := c.kube.get(ctx, path, claim)
		switch {
		case err == nil && claim.Spec.Network != c.cfg.Name:
			return nil, fmt.Errorf("pod %s: ipam-claim-reference %s is a claim on network %q, not %q", c.podRef(), name, claim.Spec.Network, c.cfg.Name)
		case err == nil && refusal(claim, sel) != "":
			return nil, fmt.Errorf("pod %s: %s", c.podRef(), refusal(claim, sel))
		case err == nil && len(claim.Status.IPs) > 0:
			if err := c.sameVM(ctx, claim, sel); err != nil {
				return nil, err
			}
			return claim, nil
		case err == nil:
			last = fmt.Errorf("IPAMClaim %s/%s has no addresses yet", c.podNS, name)
		case apierrors.IsNotFound(err):
			last = fmt.Errorf("IPAMClaim %s/%s does not exist", c.podNS, name)
		default:
			last = err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("network %q, pod %s: %w", c.cfg.Name, c.podRef(), last)
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// checkClaim is CHECK for an attachment that took its addresses from a claim.
func (c *call) checkClaim(ctx context.Context, ref string, ips []netip.Addr) error {
	ns, name, _ := strings.Cut(ref, "/")
	claim := &ipamclaims.IPAMClaim{}
	if err := c.kube.get(ctx, "/apis/k8s.cni.cncf.io/v1alpha1/namespaces/"+ns+"/ipamclaims/"+name, claim); err != nil {
		return fmt.Errorf("IPAMClaim %s: %w", ref, err)
	}
	for _, a := range ips {
		found := false
		for _, s := range claim.Status.IPs {
			if p, err := netip.ParsePrefix(s); err == nil && p.Addr() == a {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: IPAMClaim %s no longer holds it", a, ref)
		}
	}
	return nil
}

// refusal says why the pod may not take the claim's addresses: the claim is being deleted,
// or is not its VM's, or was made for another NAD.
func refusal(claim *ipamclaims.IPAMClaim, sel selection) string {
	cl := cniconf.Claim{
		Name: claim.Name, Deleting: claim.DeletionTimestamp != nil,
		VM: claim.Labels[cniconf.ClaimVMLabel], NAD: claim.Annotations[cniconf.ClaimNADAnnotation],
	}
	if ref := metav1.GetControllerOf(claim); ref != nil && ref.APIVersion == "kubevirt.io/v1" {
		cl.Controller, cl.ControllerKind = ref.Name, ref.Kind
	}
	return cl.Refusal(sel.vm, sel.nad)
}

// takenFromClaim refuses an address of status.ips that another's reservation holds: the claim's
// own was deleted and a pod took the address before the manager recreated it (the manager
// then reports AddressTaken on the claim). A missing reservation is no refusal: the manager
// recreates it, and while it is down the claim's status.ips is the best record there is.
func (c *call) takenFromClaim(ctx context.Context, name string, a netip.Addr) error {
	rname := ReservationName(c.cfg.PoolNetwork(), a)
	o := &wbv1.OverlappingRangeIPReservation{}
	err := c.kube.get(ctx, c.kube.wbPath("overlappingrangeipreservations", rname), o)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading reservation %s of IPAMClaim %s/%s: %w", rname, c.podNS, name, err)
	case o.Spec.PodRef != c.podNS+"/"+name:
		return fmt.Errorf("pod %s: address %s of IPAMClaim %s/%s is held by %s (reservation %s)", c.podRef(), a, c.podNS, name, c.holderName(o.Spec.PodRef), rname)
	}
	return nil
}

// sameVM refuses a claim controlled by another UID than the pod's VMI or that VMI's VM: a VM
// deleted and created again under its name finds the earlier VM's claim until the garbage
// collector deletes it, and rackwire then releases the address under the running pod.
func (c *call) sameVM(ctx context.Context, claim *ipamclaims.IPAMClaim, sel selection) error {
	ref := metav1.GetControllerOf(claim)
	if sel.vm != "" && sel.vmiUID == "" {
		// A label and an annotation anyone may write: virt-controller makes the VMI the
		// launcher pod's controller, and that VMI's UID is what the claim's owner chain checks.
		return fmt.Errorf("pod %s: no VirtualMachineInstance controls it: only VMI %s's launcher pods take IPAMClaim %s's addresses",
			c.podRef(), sel.vm, claim.Name)
	}
	if ref == nil || string(ref.UID) == sel.vmiUID {
		return nil
	}
	vmi := &metav1.PartialObjectMetadata{}
	if err := c.kube.get(ctx, "/apis/kubevirt.io/v1/namespaces/"+c.podNS+"/virtualmachineinstances/"+sel.vm, vmi); err != nil {
		return fmt.Errorf("pod %s: reading VMI %s to check IPAMClaim %s's owner: %w", c.podRef(), sel.vm, claim.Name, err)
	}
	if vref := metav1.GetControllerOf(vmi); string(vmi.UID) == sel.vmiUID && vref != nil && vref.UID == ref.UID {
		return nil
	}
	return fmt.Errorf("pod %s: IPAMClaim %s belongs to an earlier %s %s (UID %s), not to the pod's VMI %s (UID %s)",
		c.podRef(), claim.Name, ref.Kind, ref.Name, ref.UID, sel.vm, sel.vmiUID)
}
