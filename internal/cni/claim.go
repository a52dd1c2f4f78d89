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
	"strconv"
	"strings"
	"time"

	ipamclaims "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	current "github.com/containernetworking/cni/pkg/types/100"
)

// claimRef is the ipam-claim-reference of this attachment's network-selection element in
// the pod's k8s.v1.cni.cncf.io/networks annotation, "" when there is none. The element is
// the one whose interface is this ifname, else the one Multus names net<position>.
func (c *call) claimRef(ctx context.Context) (string, error) {
	if c.podName == "" || c.podNS == "" {
		return "", nil
	}
	pod := &metav1.PartialObjectMetadata{}
	if err := c.kube.get(ctx, "/api/v1/namespaces/"+c.podNS+"/pods/"+c.podName, pod); err != nil {
		return "", fmt.Errorf("reading pod %s for its ipam-claim-reference: %w", c.podRef(), err)
	}
	if c.podUID == "" {
		c.podUID = string(pod.UID)
	}
	raw := strings.TrimSpace(pod.Annotations[nadv1.NetworkAttachmentAnnot])
	if !strings.HasPrefix(raw, "[") {
		// The short form (name, namespace/name@if) carries no claim reference.
		return "", nil
	}
	var elems []nadv1.NetworkSelectionElement
	if err := json.Unmarshal([]byte(raw), &elems); err != nil {
		return "", fmt.Errorf("pod %s: annotation %s: %w", c.podRef(), nadv1.NetworkAttachmentAnnot, err)
	}
	for _, e := range elems {
		if e.InterfaceRequest == c.ifName {
			return e.IPAMClaimReference, nil
		}
	}
	if n, ok := strings.CutPrefix(c.ifName, "net"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 1 && i <= len(elems) && elems[i-1].InterfaceRequest == "" {
			return elems[i-1].IPAMClaimReference, nil
		}
	}
	return "", nil
}

// addFromClaim answers ADD with the IPAMClaim's addresses, waiting for the manager to fill
// status.ips; it writes no pool entry, so DEL and GC cannot free them.
func (c *call) addFromClaim(ctx context.Context, name string) (*current.Result, error) {
	claim, err := c.waitClaim(ctx, name)
	if err != nil {
		c.event("IPAMClaimNotReady", err.Error())
		return nil, err
	}
	if err := c.st.Lock(); err != nil {
		return nil, err
	}
	defer c.st.Unlock()
	rec := &record{ContainerID: c.containerID, IfName: c.ifName, PodRef: c.podRef(), Claim: c.podNS + "/" + name}
	if err := c.st.save(rec); err != nil {
		return nil, err
	}
	res := &current.Result{CNIVersion: current.ImplementedSpecVersion, Routes: c.cfg.Routes, DNS: c.cfg.DNS}
	for _, s := range claim.Status.IPs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("IPAMClaim %s/%s: status.ips %q: %w", c.podNS, name, s, err)
		}
		res.IPs = append(res.IPs, c.ipConfig(p.Addr(), p.Bits()))
	}
	return res, nil
}

// waitClaim reads the claim until the manager has given it addresses, with backoff, until
// ctx ends.
func (c *call) waitClaim(ctx context.Context, name string) (*ipamclaims.IPAMClaim, error) {
	path := "/apis/k8s.cni.cncf.io/v1alpha1/namespaces/" + c.podNS + "/ipamclaims/" + name
	wait := 100 * time.Millisecond
	var last error
	for {
		claim := &ipamclaims.IPAMClaim{}
		err := c.kube.get(ctx, path, claim)
		switch {
		case err == nil && claim.Spec.Network != c.cfg.Name:
			return nil, fmt.Errorf("pod %s: ipam-claim-reference %s is a claim on network %q, not %q", c.podRef(), name, claim.Spec.Network, c.cfg.Name)
		case err == nil && len(claim.Status.IPs) > 0:
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
