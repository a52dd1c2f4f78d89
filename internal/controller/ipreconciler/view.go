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

package ipreconciler

import (
	"context"
	"net/netip"
	"strings"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler/holder"
)

// AnnotationPodUID records, on a reservation the manager put back, the UID of the pod it
// was put back for: the pod's identity beyond its name, which whereabouts' objects do not
// carry.
const AnnotationPodUID = "rackwire.metal3.io/pod-uid"

// networks is what a scope's NADs say.
type networks struct {
	scope holder.Scope
	// persistent are the CNI network names (IPAMClaim spec.network) of the scope's networks
	// that allow persistent IPs.
	persistent map[string]bool
	// unreserved are the ranges of the scope's NADs that turn enable_overlapping_ranges off:
	// no reservation is put back there. Per range, not per scope: network_name is anyone's
	// to write in a NAD of their own namespace, and such a NAD must not turn the put-back
	// off for the ranges of another.
	unreserved []netip.Prefix
	// nads are the scope's NADs.
	nads []nadv1.NetworkAttachmentDefinition
}

// reserves says whether the scope keeps reservations at a: no NAD whose range holds it
// turns enable_overlapping_ranges off.
func (n networks) reserves(a netip.Addr) bool {
	for _, r := range n.unreserved {
		if r.Contains(a) {
			return false
		}
	}
	return true
}

func (r *Reconciler) networks(ctx context.Context, scope string) (networks, bool, error) {
	var list nadv1.NetworkAttachmentDefinitionList
	if err := r.List(ctx, &list, client.MatchingFields{scopeIndex: indexKey(scope)}); err != nil {
		return networks{}, false, err
	}
	n := networks{scope: holder.Scope{NetworkName: scope}, persistent: map[string]bool{}, nads: list.Items}
	found := false
	for i := range list.Items {
		cfg := []byte(list.Items[i].Spec.Config)
		net, err := cniconf.Parse(cfg)
		if net.NetworkName != scope {
			continue // the index ran ahead of or behind the cache
		}
		found = true
		if err != nil {
			continue // reported by the node-slice and claim controllers
		}
		for _, rg := range net.Ranges {
			n.scope.Ranges = append(n.scope.Ranges, rg.Subnet)
		}
		if net.PersistentIPs {
			n.persistent[net.Name] = true
		}
		if !overlapping(cfg) {
			for _, rg := range net.Ranges {
				n.unreserved = append(n.unreserved, rg.Subnet)
			}
		}
	}
	if scope == "" {
		for _, s := range r.scopes.all() {
			if s != "" {
				n.scope.Named = append(n.scope.Named, s)
			}
		}
	}
	return n, found, nil
}

// entry is one allocation of an IPPool of the scope.
type entry struct {
	pool  *nodeslicev1alpha1.IPPool
	key   string
	addr  netip.Addr
	alloc nodeslicev1alpha1.IPAllocation
}

// view is what the cache holds of a scope.
type view struct {
	entries []entry
	// reservations are the scope's; byName holds every reservation of the namespace.
	reservations []*nodeslicev1alpha1.OverlappingRangeIPReservation
	byName       map[string]*nodeslicev1alpha1.OverlappingRangeIPReservation
	// reservedAt is, per container ID, when its earliest reservation was created; uid the
	// pod UID recorded on one of them.
	reservedAt map[string]time.Time
	uid        map[string]string
	// recorded holds "<address>|<container id>" and "<address>|<podref>" of every
	// allocation of the namespace's IPPools, whatever their network.
	recorded map[string]bool
	// containers are the container IDs of every allocation of the namespace.
	containers map[string]bool
	// pools are the namespace's IPPools with their parsed ranges.
	pools  []*nodeslicev1alpha1.IPPool
	ranges map[*nodeslicev1alpha1.IPPool]netip.Prefix
	claims []*ipamclaimsv1alpha1.IPAMClaim
	// claimRefs holds "<namespace>/<name>" of every IPAMClaim.
	claimRefs map[string]bool
	// latest is, per "<podref>|<ifname>", the container of the newest reservation the plugin
	// made for it, and when: the pod's current sandbox for that interface.
	latest map[string]sandbox
	// sandboxes are, per "<podref>|<ifname>", the containers and addresses the scope's
	// pools record for it.
	sandboxes map[string][]recorded
}

type recorded struct {
	containerID string
	addr        netip.Addr
}

type sandbox struct {
	containerID string
	at          time.Time
}

// superseded says whether a later sandbox of the pod holds the interface: another
// container's reservation for the same pod and interface, created after reservedAt (zero:
// this container has no reservation left).
func (v *view) superseded(podRef, ifName, containerID string, reservedAt time.Time) bool {
	l, ok := v.latest[podRef+"|"+ifName]
	return ok && containerID != "" && l.containerID != containerID && (reservedAt.IsZero() || reservedAt.Before(l.at))
}

func recordKey(a netip.Addr, holderID string) string { return a.String() + "|" + holderID }

// read builds the view from the cache. The lists skip the deep copy: nothing in them is
// written to; writes start from fresh objects.
func (r *Reconciler) read(ctx context.Context, n networks) (*view, error) {
	v := &view{
		byName: map[string]*nodeslicev1alpha1.OverlappingRangeIPReservation{}, reservedAt: map[string]time.Time{},
		uid: map[string]string{}, recorded: map[string]bool{}, ranges: map[*nodeslicev1alpha1.IPPool]netip.Prefix{},
		claimRefs: map[string]bool{}, containers: map[string]bool{}, latest: map[string]sandbox{},
		sandboxes: map[string][]recorded{},
	}
	var pools nodeslicev1alpha1.IPPoolList
	if err := r.List(ctx, &pools, client.InNamespace(r.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range pools.Items {
		p := &pools.Items[i]
		rg, err := netip.ParsePrefix(strings.TrimSpace(p.Spec.Range))
		if err != nil {
			continue
		}
		v.pools, v.ranges[p] = append(v.pools, p), rg
		ours := n.scope.OwnsPool(p.Name, p.Spec.Range)
		for k, al := range p.Spec.Allocations {
			a, ok := holder.AddressAt(rg, k)
			if !ok {
				continue
			}
			v.containers[al.ContainerID] = true
			v.recorded[recordKey(a, al.ContainerID)] = true
			v.recorded[recordKey(a, al.PodRef)] = true
			if ours {
				v.entries = append(v.entries, entry{pool: p, key: k, addr: a, alloc: al})
				sk := al.PodRef + "|" + al.IfName
				v.sandboxes[sk] = append(v.sandboxes[sk], recorded{containerID: al.ContainerID, addr: a})
			}
		}
	}
	var orips nodeslicev1alpha1.OverlappingRangeIPReservationList
	if err := r.List(ctx, &orips, client.InNamespace(r.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range orips.Items {
		o := &orips.Items[i]
		v.byName[o.Name] = o
		if cid := o.Spec.ContainerID; cid != "" {
			if t, ok := v.reservedAt[cid]; !ok || o.CreationTimestamp.Time.Before(t) {
				v.reservedAt[cid] = o.CreationTimestamp.Time
			}
			if u := o.Annotations[AnnotationPodUID]; u != "" {
				v.uid[cid] = u
			}
			// Only the plugin's own reservations date a sandbox: one the manager put back
			// (annotated) is dated by the put-back.
			key := o.Spec.PodRef + "|" + o.Spec.IfName
			if l, ok := v.latest[key]; o.Annotations[AnnotationPodUID] == "" && (!ok || l.at.Before(o.CreationTimestamp.Time)) {
				v.latest[key] = sandbox{containerID: cid, at: o.CreationTimestamp.Time}
			}
		}
		if a, ok := cniconf.ReservedAddress(n.scope.NetworkName, o.Name); ok && n.scope.Within(a) {
			v.reservations = append(v.reservations, o)
		}
	}
	var claims ipamclaimsv1alpha1.IPAMClaimList
	if err := r.List(ctx, &claims, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range claims.Items {
		c := &claims.Items[i]
		v.claimRefs[c.Namespace+"/"+c.Name] = true
		if n.persistent[c.Spec.Network] {
			v.claims = append(v.claims, c)
		}
	}
	return v, nil
}

// claimHeld says the reservation is an IPAMClaim's: labelled by the claim controller, or
// naming an existing claim. Such a reservation is never reaped: the claim releases it.
func (v *view) claimHeld(o *nodeslicev1alpha1.OverlappingRangeIPReservation) bool {
	return o.Labels[ipamclaim.LabelClaim] != "" || v.claimRefs[o.Spec.PodRef]
}
