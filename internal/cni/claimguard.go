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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	ipamclaims "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
)

// An IPAMClaim's address is held by its reservation and by its status.ips, and never by a
// pool entry: when someone deletes the reservation (whereabouts' ip-control-loop deletes
// every one whose podref is no pod, as a claim's is), only status.ips still says the VM has
// it. Listing the network's IPAMClaims on every ADD would cost a read that grows with the
// cluster's VMs (and list rights on claims in every namespace), so the node keeps the
// network's claimed addresses beside its records and reads them again behind the ADDs:
//   - from the manager's reservations of claims, the only ones carrying the claim labels
//     (a label-selected list in the pools' namespace: the claims' addresses, no more);
//   - an address noted before whose reservation is gone stays while its claim (named by the
//     labels and podref that were on it) still lists it in status.ips: one GET per such
//     address, until the manager puts the reservation back (within seconds).
// An ADD answers only with an address neither the pool (the node's view of it), nor a
// reservation, nor this list holds. What it cannot see: a claim allocated and its
// reservation deleted between two reads of the list (claimsTTL); the manager's put-back
// closes that.

// The manager's labels on a claim's reservation (internal/controller/ipamclaim).
const (
	labelClaim          = "rackwire.metal3.io/ipamclaim"
	labelClaimNamespace = "rackwire.metal3.io/ipamclaim-namespace"
)

// claimsTTL is the age past which the list is read again: by the flusher behind the ADDs,
// or by an ADD when no flusher runs (networks without node slices).
const claimsTTL = 5 * time.Second

// claimsMax is the age past which an ADD reads the list itself even where a flusher runs.
const claimsMax = 30 * time.Second

type claimed struct {
	Read time.Time `json:"read"`
	// Addrs maps an address to its claim, namespace/name.
	Addrs map[string]string `json:"addrs,omitempty"`
}

func (s *state) claimsPath() string { return filepath.Join(s.dir, ".claims") }

func (c *call) readClaimed() *claimed { return readCached[claimed](c.st.claimsPath()) }

// readCached reads a list the node keeps beside its records; nil when there is none or it
// cannot be read, which has it read again from the apiserver.
func readCached[T any](path string) *T {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	v := new(T)
	if json.Unmarshal(b, v) != nil {
		return nil
	}
	return v
}

// claimedAddrs is the network's addresses held by IPAMClaims, read again first if the list
// is too old for an ADD to trust.
func (c *call) claimedAddrs(ctx context.Context) ([]netip.Addr, error) {
	cl := c.readClaimed()
	limit := claimsTTL
	if c.refreshedBehind() {
		limit = claimsMax
	}
	if cl == nil || age(cl.Read) > limit {
		var err error
		if cl, err = c.refreshClaims(ctx, cl); err != nil {
			return nil, err
		}
	}
	out := make([]netip.Addr, 0, len(cl.Addrs))
	for s := range cl.Addrs {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a)
		}
	}
	return out, nil
}

func age(t time.Time) time.Duration {
	d := time.Since(t)
	if d < 0 {
		return time.Hour
	}
	return d
}

// refreshClaimsBehind reads the list again when it is due, for the ADDs to come.
func (c *call) refreshClaimsBehind(ctx context.Context) error {
	cl := c.readClaimed()
	if cl != nil && age(cl.Read) <= claimsTTL {
		return nil
	}
	_, err := c.refreshClaims(ctx, cl)
	return err
}

// refreshClaims reads the network's claimed addresses: the claims' reservations, and the
// addresses of prev whose reservation went while their claim still lists them.
func (c *call) refreshClaims(ctx context.Context, prev *claimed) (*claimed, error) {
	list := &wbv1.OverlappingRangeIPReservationList{}
	sel := url.QueryEscape(labelClaim)
	if err := c.kube.get(ctx, c.kube.wbPath("overlappingrangeipreservations", "")+"?labelSelector="+sel, list); err != nil {
		return nil, err
	}
	cl := &claimed{Read: time.Now(), Addrs: map[string]string{}}
	for _, o := range list.Items {
		a, ok := cniconf.ReservedAddress(c.cfg.PoolNetwork(), o.Name)
		if !ok || !c.inRanges(a) {
			continue
		}
		cl.Addrs[a.String()] = o.Labels[labelClaimNamespace] + "/" + o.Labels[labelClaim]
	}
	if prev == nil {
		// The node's first look: a claim whose reservation is already gone (deleted while
		// the manager was down) is known from nothing else, so the claims themselves are
		// read, once; later looks keep what they found while the claims still list it.
		if err := c.seedClaims(ctx, cl); err != nil {
			return nil, err
		}
	}
	if prev != nil {
		for s, ref := range prev.Addrs {
			if _, ok := cl.Addrs[s]; ok {
				continue
			}
			still, err := c.claimHolds(ctx, ref, s)
			if err != nil {
				return nil, err
			}
			if still {
				cl.Addrs[s] = ref
			}
		}
	}
	b, err := json.Marshal(cl)
	if err != nil {
		return nil, err
	}
	return cl, writeIfChanged(c.st.claimsPath(), b, 0o600)
}

// claimHolds says whether the IPAMClaim ref (namespace/name) on this network still lists
// addr in status.ips.
func (c *call) claimHolds(ctx context.Context, ref, addr string) (bool, error) {
	ns, name, ok := cutRef(ref)
	if !ok {
		return false, nil
	}
	claim := &ipamclaims.IPAMClaim{}
	err := c.kube.get(ctx, "/apis/k8s.cni.cncf.io/v1alpha1/namespaces/"+url.PathEscape(ns)+"/ipamclaims/"+url.PathEscape(name), claim)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if claim.Spec.Network != c.cfg.Name {
		return false, nil
	}
	return slices.ContainsFunc(claim.Status.IPs, func(s string) bool {
		p, err := netip.ParsePrefix(s)
		return err == nil && p.Addr().Unmap().String() == addr
	}), nil
}

func cutRef(ref string) (ns, name string, ok bool) {
	ns, name, _ = strings.Cut(ref, "/")
	return ns, name, ns != "" && name != ""
}

// seedClaims adds to cl the addresses of this network's IPAMClaims, read from the claims.
func (c *call) seedClaims(ctx context.Context, cl *claimed) error {
	list := &ipamclaims.IPAMClaimList{}
	err := c.kube.get(ctx, "/apis/k8s.cni.cncf.io/v1alpha1/ipamclaims", list)
	if apierrors.IsNotFound(err) {
		return nil // no IPAMClaim CRD: no claims
	}
	if err != nil {
		return fmt.Errorf("network %q: reading the IPAMClaims: %w", c.cfg.Name, err)
	}
	for i := range list.Items {
		claim := &list.Items[i]
		if claim.Spec.Network != c.cfg.Name {
			continue
		}
		for _, s := range claim.Status.IPs {
			p, err := netip.ParsePrefix(s)
			if a := p.Addr().Unmap(); err == nil && c.inRanges(a) {
				if _, ok := cl.Addrs[a.String()]; !ok {
					cl.Addrs[a.String()] = claim.Namespace + "/" + claim.Name
				}
			}
		}
	}
	return nil
}
