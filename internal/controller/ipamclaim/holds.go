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
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
)

// picks remembers, per reservation scope (network_name: the networks without one share the
// unprefixed reservation names, as in whereabouts), the addresses this process picked for
// a claim: the cache may not show their reservation yet, and a create whose answer did not
// prove failure is retried with the same address. A pick with no claim is an address found
// taken (AlreadyExists) that the cache does not show yet.
type picks struct {
	mu     sync.Mutex
	scopes map[string]*scope
}

type scope struct {
	mu     sync.Mutex
	picked map[netip.Addr]string // address -> claim key ("" taken by someone else)
	free   map[string]*freePool  // by range, all of one view
}

func newPicks() *picks { return &picks{scopes: map[string]*scope{}} }

func (p *picks) scope(networkName string) *scope {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.scopes[networkName]
	if s == nil {
		s = &scope{picked: map[netip.Addr]string{}}
		p.scopes[networkName] = s
	}
	return s
}

// of lists the claim's picks in every scope, with the scope, for its release.
func (p *picks) of(claim string) map[string][]netip.Addr {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]netip.Addr{}
	for name, s := range p.scopes {
		s.mu.Lock()
		for a, c := range s.picked {
			if c == claim {
				out[name] = append(out[name], a)
			}
		}
		s.mu.Unlock()
	}
	return out
}

// forget drops the claim's picks once its reservations are gone.
func (p *picks) forget(claim string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.scopes {
		s.mu.Lock()
		for a, c := range s.picked {
			if c == claim {
				delete(s.picked, a)
			}
		}
		s.mu.Unlock()
	}
}

// seen is what the cache says about a network's addresses: every address held (by a
// reservation, a whereabouts IPPool or a claim's status.ips) and the reservations of one
// claim.
type seen struct {
	held []netip.Addr
	mine []netip.Addr
	// view is the read held and mine come from: picks from one view share a pool.
	view *heldView
}

// The caches are synced before the first reconcile, so a manager that starts holds every
// claim's addresses (their reservations and status.ips) before it hands out any.

// heldView is what the cache says about one network's addresses: every address held, and
// each claim's reservations.
type heldView struct {
	at   time.Time
	held []netip.Addr
	mine map[string][]netip.Addr
}

// views shares recent reads of a network's addresses between the reconciles of a burst:
// every read copies every reservation, pool and claim of the network out of the cache, so a
// read per claim costs a burst of n claims n² copies. A view younger than the reuse window
// is safe to allocate from: this process's own picks are in the scope (never handed out
// twice), another writer's reservation made since answers AlreadyExists (the create is the
// lock), and a released reservation drops every view, so a claim it wakes reads afresh.
type views struct {
	mu sync.Mutex
	m  map[string]*viewEntry
}

// viewEntry is one network's view; fill serialises its reads, so a burst's reconciles wait
// for the one read under way instead of all reading at once.
type viewEntry struct {
	fill sync.Mutex
	v    atomic.Pointer[heldView]
}

func (v *views) entry(key string) *viewEntry {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[string]*viewEntry{}
	}
	e := v.m[key]
	if e == nil {
		e = &viewEntry{}
		v.m[key] = e
	}
	return e
}

// drop forgets every view: an address was released.
func (v *views) drop() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.m {
		e.v.Store(nil)
	}
}

// recentScan is scan from a view at most ScanReuse old.
func (r *ClaimReconciler) recentScan(ctx context.Context, n cniconf.Network, claimRef string) (seen, error) {
	e := r.views.entry(n.NetworkName + "\x00" + n.Name)
	fresh := func() *heldView {
		if h := e.v.Load(); h != nil && time.Since(h.at) < r.ScanReuse {
			return h
		}
		return nil
	}
	h := fresh()
	if h == nil {
		e.fill.Lock()
		if h = fresh(); h == nil {
			var err error
			if h, err = r.readHeld(ctx, n); err != nil {
				e.fill.Unlock()
				return seen{}, err
			}
			e.v.Store(h)
		}
		e.fill.Unlock()
	}
	return seen{held: h.held, mine: h.mine[claimRef], view: h}, nil
}

func (r *ClaimReconciler) readHeld(ctx context.Context, n cniconf.Network) (*heldView, error) {
	v := &heldView{at: time.Now(), mine: map[string][]netip.Addr{}}
	var orips nodeslicev1alpha1.OverlappingRangeIPReservationList
	if err := r.List(ctx, &orips, client.InNamespace(r.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range orips.Items {
		o := &orips.Items[i]
		if a, ok := cniconf.ReservedAddress(n.NetworkName, o.Name); ok {
			v.held = append(v.held, a)
			if o.Labels[LabelClaim] != "" {
				v.mine[o.Spec.PodRef] = append(v.mine[o.Spec.PodRef], a)
			}
		}
	}
	var pools nodeslicev1alpha1.IPPoolList
	if err := r.List(ctx, &pools, client.InNamespace(r.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range pools.Items {
		p := &pools.Items[i]
		// A named network's pools carry its name first; an unnamed network's may be any.
		if n.NetworkName != "" && !strings.HasPrefix(p.Name, n.NetworkName+"-") {
			continue
		}
		v.held = append(v.held, poolAddresses(p)...)
	}
	var claims ipamclaimsv1alpha1.IPAMClaimList
	if err := r.List(ctx, &claims, client.MatchingFields{claimNetworkIndex: n.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range claims.Items {
		// A claim being deleted holds its addresses through its reservations, which go
		// first; its status.ips would keep them past their release.
		if !claims.Items[i].DeletionTimestamp.IsZero() {
			continue
		}
		for _, ip := range claims.Items[i].Status.IPs {
			if p, err := netip.ParsePrefix(ip); err == nil {
				v.held = append(v.held, p.Addr().Unmap())
			}
		}
	}
	return v, nil
}

// poolAddresses reads a whereabouts IPPool: allocations keyed by the decimal offset from
// the network address of spec.range, read as whereabouts reads them (negative keys are
// offsets from 2^63).
func poolAddresses(p *nodeslicev1alpha1.IPPool) []netip.Addr {
	r, err := netip.ParsePrefix(strings.TrimSpace(p.Spec.Range))
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(p.Spec.Allocations))
	for k := range p.Spec.Allocations {
		if a, err := cniconf.AtOffset(r, k); err == nil {
			out = append(out, a)
		}
	}
	return out
}
