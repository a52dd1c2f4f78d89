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
	"fmt"
	"net/netip"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// maxTaken bounds the addresses one reconcile finds taken before it lets the cache catch up.
const maxTaken = 64

// errExhausted says a range has no free address; exhausted.rangeIndex says which.
type errExhausted struct{ rangeIndex int }

func (e errExhausted) Error() string {
	return fmt.Sprintf("range %d has no free address", e.rangeIndex)
}

// rangePool is the addresses of a network's range i that may be handed out: range_start to
// range_end (the whole subnet when unbounded) minus exclude, the gateway, and the network
// and IPv4 broadcast addresses. A claim gets its address from the whole range even in
// node-slice mode: a VM migrates between nodes.
func rangePool(n cniconf.Network, i int) (*ipalloc.Pool, error) {
	rg := n.Ranges[i]
	c := ipalloc.Config{
		Entries: []ipalloc.Entry{{Start: rg.Start, End: rg.End, Subnet: rg.Subnet}},
		Gateway: n.Gateway,
	}
	if n.Gateway.IsValid() && n.Gateway.Is4() != rg.Subnet.Addr().Is4() {
		c.Gateway = netip.Addr{} // ipalloc refuses a gateway of a family no entry has
	}
	for _, x := range rg.Exclude {
		c.Excluded = append(c.Excluded, ipalloc.RangeOf(x))
	}
	return ipalloc.NewPool(c)
}

func claimKey(c *ipamclaimsv1alpha1.IPAMClaim) string { return c.Namespace + "/" + c.Name }

// allocate gives the claim one address per range, each held by a reservation, and returns
// them as status.ips writes them. Addresses the claim already holds (a reconcile that ended
// before its status write, a manager restart) are its own again.
func (r *ClaimReconciler) allocate(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim, n cniconf.Network) ([]string, error) {
	ref := claimKey(claim)
	s, err := r.recentScan(ctx, n, ref)
	if err != nil {
		return nil, err
	}
	ips := make([]string, 0, len(n.Ranges))
	for i := range n.Ranges {
		pool, err := rangePool(n, i)
		if err != nil {
			return nil, fmt.Errorf("range %d: %w", i, err)
		}
		a, ok := firstIn(pool, s.mine)
		if ok {
			// The cache (or a view read before a release) may still show the reservation of
			// an earlier claim of this name, deleted since: only a live read says it holds.
			if ok, err = r.stillHolds(ctx, claim, n, a); err != nil {
				return nil, err
			}
		}
		if !ok {
			if a, err = r.reserveOne(ctx, claim, n, i, s); err != nil {
				return nil, err
			}
		}
		ips = append(ips, n.Ranges[i].CIDR(a))
	}
	return ips, nil
}

// stillHolds reads a's reservation past the cache: it exists and is the claim's.
func (r *ClaimReconciler) stillHolds(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim, n cniconf.Network, a netip.Addr) (bool, error) {
	var o nodeslicev1alpha1.OverlappingRangeIPReservation
	err := r.Live.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: cniconf.ReservationName(n.NetworkName, a)}, &o)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil && holdsFor(&o, claim), err
}

func firstIn(pool *ipalloc.Pool, addrs []netip.Addr) (netip.Addr, bool) {
	for _, a := range addrs {
		if pool.Contains(a) {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// reserveOne picks the claim's address in range i and creates its reservation: the create
// is the lock (a pod, whereabouts or another claim holding the address answers
// AlreadyExists, and the next one is tried).
func (r *ClaimReconciler) reserveOne(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim, n cniconf.Network, i int, s seen) (netip.Addr, error) {
	ref := claimKey(claim)
	sc := r.picks.scope(n.NetworkName)
	for range maxTaken {
		a, err := pick(sc, n, i, ref, s)
		if err != nil {
			return a, err
		}
		mine, _, err := r.createReservation(ctx, claim, n, a)
		switch {
		case err == nil && mine:
			return a, nil
		case err == nil:
			sc.mark(a, "") // taken: skip it until the cache shows its holder
		case refused(err):
			sc.unmark(a)
			return netip.Addr{}, err
		default:
			// A timeout or a lost connection does not say the create failed: it may have
			// landed. The pick stays the claim's and the retry settles it through
			// AlreadyExists, so the address is never handed out twice.
			return netip.Addr{}, err
		}
	}
	return netip.Addr{}, fmt.Errorf("range %d: %d addresses in a row were taken; retrying once the cache catches up", i, maxTaken)
}

func (sc *scope) mark(a netip.Addr, claim string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.picked[a] = claim
}

func (sc *scope) unmark(a netip.Addr) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	delete(sc.picked, a)
	sc.free = nil // the address is free again: the next pick rebuilds
}

// freePool is a range's pool with a view's held addresses and the scope's picks reserved;
// every pick from it is reserved in it too. Picks forgotten since stay reserved in it until
// the next view: a released address is free again only once its reservation's deletion
// drops the views anyway.
type freePool struct {
	view *heldView
	pool *ipalloc.Pool
}

func anyView(m map[string]*freePool) *heldView {
	for _, f := range m {
		return f.view
	}
	return nil
}

// fill reserves in pool every address the view holds and every pick, and forgets the
// addresses found taken that the view now shows: once the cache shows the holder, the cache
// holds it (and frees it when the holder lets go). Called with sc.mu held.
func (sc *scope) fill(pool *ipalloc.Pool, s seen) {
	heldSet := make(map[netip.Addr]struct{}, len(s.held))
	for _, a := range s.held {
		heldSet[a] = struct{}{}
		_ = pool.Reserve(a) // addresses of other ranges or already reserved: nothing to do
	}
	for a, c := range sc.picked {
		_ = pool.Reserve(a)
		if c == "" {
			if _, seen := heldSet[a]; seen {
				delete(sc.picked, a)
			}
		}
	}
}

// pick returns the claim's unsettled pick in range i if it has one, else the lowest address
// that neither the cache (s, read before) nor this process knows to be held, noted as the
// claim's. The scope's lock makes concurrent reconciles of one network pick different
// addresses: every address this process picks is in the scope until released, so a cache
// read taken before the lock misses only other writers' reservations, and for those the
// create is the lock.
func pick(sc *scope, n cniconf.Network, i int, ref string, s seen) (netip.Addr, error) {
	pool, err := rangePool(n, i)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("range %d: %w", i, err)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for a, c := range sc.picked {
		if c == ref && pool.Contains(a) {
			return a, nil
		}
	}
	// The pool minus the view's held addresses and the picks is built once per view and
	// range, then each pick takes from it: built per pick under the scope's lock, a burst of
	// n claims cost n² reservations in a row, the one serial stretch of the allocator.
	key := fmt.Sprint(n.Ranges[i], n.Gateway)
	free := sc.free[key]
	if free == nil || free.view != s.view || s.view == nil {
		sc.fill(pool, s)
		free = &freePool{view: s.view, pool: pool}
		if sc.free == nil || (len(sc.free) > 0 && anyView(sc.free) != s.view) {
			sc.free = map[string]*freePool{}
		}
		sc.free[key] = free
	}
	for {
		a, err := free.pool.Allocate(ipalloc.Sequential)
		if errors.Is(err, ipalloc.ErrExhausted) {
			return a, errExhausted{rangeIndex: i}
		}
		if err != nil {
			return a, err
		}
		// Another pool of this view (a NAD of the same scope with another gateway or
		// exclusions) may have picked it since this pool was built.
		if _, taken := sc.picked[a]; taken {
			continue
		}
		sc.picked[a] = ref
		return a, nil
	}
}

// createReservation creates the OverlappingRangeIPReservation of a for the claim; mine is
// false when someone else holds the address, created says this call stored it.
func (r *ClaimReconciler) createReservation(ctx context.Context, claim *ipamclaimsv1alpha1.IPAMClaim, n cniconf.Network, a netip.Addr) (mine, created bool, err error) {
	ref := claimKey(claim)
	orip := &nodeslicev1alpha1.OverlappingRangeIPReservation{
		ObjectMeta: metav1.ObjectMeta{
			Name:      cniconf.ReservationName(n.NetworkName, a),
			Namespace: r.Namespace,
			Labels:    map[string]string{LabelClaim: claim.Name, LabelClaimNamespace: claim.Namespace, LabelManagedBy: managedBy},
		},
		Spec: nodeslicev1alpha1.OverlappingRangeIPReservationSpec{PodRef: ref},
	}
	err = r.Create(ctx, orip)
	if !apierrors.IsAlreadyExists(err) {
		return err == nil, err == nil, err
	}
	var live nodeslicev1alpha1.OverlappingRangeIPReservation
	if err := r.Live.Get(ctx, client.ObjectKeyFromObject(orip), &live); err != nil {
		if apierrors.IsNotFound(err) {
			// Released between the create and the read: the retry tries it again.
			return false, false, fmt.Errorf("reservation %s went away while read: %w", orip.Name, err)
		}
		return false, false, err
	}
	return holdsFor(&live, claim), false, nil
}

// holdsFor says a reservation is the claim's (created by an earlier reconcile whose answer
// was lost, or before a restart).
func holdsFor(o *nodeslicev1alpha1.OverlappingRangeIPReservation, claim *ipamclaimsv1alpha1.IPAMClaim) bool {
	return o.Spec.PodRef == claimKey(claim) && o.Labels[LabelClaim] == claim.Name && o.Labels[LabelClaimNamespace] == claim.Namespace
}

// refused reports whether the apiserver definitely did not store a create.
func refused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsUnauthorized(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsRequestEntityTooLargeError(err)
}
