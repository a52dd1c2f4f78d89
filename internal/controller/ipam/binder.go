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

package ipam

import (
	"cmp"
	"context"
	"net/netip"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// binder holds the steps both claim kinds share: find the claim's IPAddress, or reserve an
// address and create one; and release it when the claim goes.
type binder struct {
	client.Client
	// APIReader reads past the cache where a create just told that the cache is behind.
	APIReader client.Reader
	Registry  *Registry
	kind      addressKind
}

// standing is how an IPAddress that names a claim relates to that claim object.
type standing int

const (
	// live: the claim's address.
	live standing = iota
	// goingAway: the claim's address, deleted by someone while the claim lives; it is
	// created again with the same address.
	goingAway
	// stale: it was made for an earlier claim of the same name (another UID), which is gone.
	stale
)

func (b *binder) standingOf(o, claim client.Object) standing {
	if uid, ok := claimOwner(o, b.kind.claimKind); ok && uid != claim.GetUID() {
		return stale
	}
	if o.GetDeletionTimestamp() != nil {
		return goingAway
	}
	return live
}

// byClaim lists, through the claim index of the cache, the IPAddresses of pool that name
// the claim.
func (b *binder) byClaim(ctx context.Context, claim client.Object, pool string) ([]client.Object, error) {
	list := b.kind.newList()
	if err := b.List(ctx, list, client.InNamespace(claim.GetNamespace()), client.MatchingFields{IndexClaim: claim.GetName()}); err != nil {
		return nil, err
	}
	var out []client.Object
	for _, o := range b.kind.items(list) {
		if _, _, p, ok := b.kind.holds(o); ok && p == pool {
			out = append(out, o)
		}
	}
	return out, nil
}

// bind finds or allocates the claim's address. want is the address the claim asks for
// (invalid for any); published is the IPAddress name its status already shows, which is
// kept whenever that object exists; allocate false finds an address but makes none. An
// outcome without a reason means "try again soon, nothing to report".
func (b *binder) bind(ctx context.Context, claim client.Object, pool *ipamv1alpha1.IPPool, want netip.Addr, published string, allocate bool) (outcome, error) {
	objs, err := b.byClaim(ctx, claim, pool.Name)
	if err != nil {
		return outcome{}, err
	}
	var mine []client.Object
	settling := false
	for _, o := range objs {
		switch b.standingOf(o, claim) {
		case live:
			mine = append(mine, o)
		case goingAway:
			settling = true
			// Foreground deletion of a pool deletes its addresses first: let them go
			// rather than create them again, since a pool being deleted hands out nothing.
			if !pool.DeletionTimestamp.IsZero() {
				if err := release(ctx, b.Client, o, b.kind.addrFin); err != nil {
					return outcome{}, err
				}
				continue
			}
			if err := b.recreate(ctx, claim, pool, o); err != nil {
				return outcome{}, err
			}
		case stale:
			if err := release(ctx, b.Client, o, b.kind.addrFin); err != nil {
				return outcome{}, err
			}
			// It goes in a moment, and the claim may want its address (a pre-allocation
			// by name): wait for it. Unless another tool's finalizer keeps it, for as
			// long as that tool likes: it holds its address under the earlier claim's
			// UID, and this claim takes another.
			if len(o.GetFinalizers()) == 0 {
				settling = true
			}
		}
	}
	if mine, err = b.adoptable(ctx, claim, pool, mine, published); err != nil {
		return outcome{}, err
	}
	if len(mine) > 0 {
		return b.keepOne(ctx, mine, published)
	}
	if settling {
		return outcome{retry: retryRace}, nil
	}
	if !allocate {
		return outcome{reason: ReasonWaitingForCluster, retry: retryPaused, transient: true,
			message: "the claim's Cluster API Cluster does not exist (yet); no address is allocated until it does"}, nil
	}
	if !pool.DeletionTimestamp.IsZero() {
		return outcome{reason: ReasonPoolNotReady, message: "IPPool " + pool.Name + " is being deleted and hands out no new address",
			retry: retryPool, transient: true}, nil
	}

	var a netip.Addr
	var params ipalloc.Params
	var pickErr error
	key := client.ObjectKeyFromObject(claim)
	if err := b.Registry.With(ctx, pool, func(s *poolState) error {
		a, pickErr = s.pick(b.kind.claimKind, claim.GetName(), claim.GetUID(), want)
		if pickErr != nil {
			s.wait(b.kind.claimKind, key)
			return nil
		}
		params = s.params(a)
		return nil
	}); err != nil {
		return outcome{}, err
	}
	if pickErr != nil {
		return pickFailure(pickErr), nil
	}

	ip, err := b.kind.build(b.Scheme(), pool, claim, a, params)
	if err != nil {
		return outcome{}, err
	}
	err = b.Create(ctx, ip)
	switch {
	case err == nil:
		return bound(ip.GetName()), nil
	case apierrors.IsAlreadyExists(err):
		return b.alreadyExists(ctx, claim, pool, ip.GetName(), a)
	case refused(err):
		b.unpick(ctx, claim, pool, a)
		return outcome{}, err
	default:
		// A timeout, a lost connection or a 5xx does not say the create failed: it may
		// have landed, or land later. The reservation stays, and the retry (the same
		// address, since the claim holds it) settles it through AlreadyExists; a release
		// meanwhile waits for it (see release).
		_ = b.Registry.With(ctx, pool, func(s *poolState) error {
			s.doubt(b.key(claim), time.Now())
			return nil
		})
		ctrl.LoggerFrom(ctx).Info(LogCreateInterrupted, "ipaddress", ip.GetName(), "error", err.Error())
		return outcome{}, err
	}
}

// adoptable drops from mine the IPAddresses the claim's status does not name whose address
// the allocator knows another holder of, or does not hand out: anyone who can create an
// IPAddress can make one for a claim yet to come, with the claim's UID as owner (a reader
// of the claim knows it), and adopting it would give the claim an address someone else
// holds or none of the pool's. The claim gets an address of its own instead.
func (b *binder) adoptable(ctx context.Context, claim client.Object, pool *ipamv1alpha1.IPPool, mine []client.Object, published string) ([]client.Object, error) {
	if !slices.ContainsFunc(mine, func(o client.Object) bool { return o.GetName() != published }) {
		return mine, nil
	}
	var out []client.Object
	err := b.Registry.With(ctx, pool, func(s *poolState) error {
		for _, o := range mine {
			a, _, _, _ := b.kind.holds(o)
			if o.GetName() == published || !s.notOurs(a, b.kind.claimKind, claim.GetName()) {
				out = append(out, o)
			}
		}
		return nil
	})
	return out, err
}

// key is the claim's holder key.
func (b *binder) key(claim client.Object) string {
	return holderKey(b.kind.claimKind, claim.GetName(), claim.GetUID())
}

// Log messages of a create whose answer did not say whether it was stored, and of the retry
// that found it had been: the chaos test counts them to know its faults cut creates short.
const (
	LogCreateInterrupted = "IPAddress create interrupted; its reservation stays until the create is settled"
	LogCreateLanded      = "an interrupted IPAddress create had landed; settled"
)

// refused reports whether the apiserver definitely did not store a create.
func refused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsRequestEntityTooLargeError(err)
}

func (b *binder) unpick(ctx context.Context, claim client.Object, pool *ipamv1alpha1.IPPool, a netip.Addr) {
	_ = b.Registry.With(ctx, pool, func(s *poolState) error {
		s.unpick(b.key(claim), a)
		return nil
	})
}

// keepOne binds the claim to one of its live IPAddresses (the published one if it is
// among them) and releases the others: a claim holds one address.
func (b *binder) keepOne(ctx context.Context, mine []client.Object, published string) (outcome, error) {
	slices.SortFunc(mine, func(x, y client.Object) int {
		pub := func(o client.Object) int {
			if o.GetName() == published {
				return 0
			}
			return 1
		}
		return cmp.Or(cmp.Compare(pub(x), pub(y)),
			x.GetCreationTimestamp().Compare(y.GetCreationTimestamp().Time), cmp.Compare(x.GetName(), y.GetName()))
	})
	for _, extra := range mine[1:] {
		if err := release(ctx, b.Client, extra, b.kind.addrFin); err != nil {
			return outcome{}, err
		}
	}
	return bound(mine[0].GetName()), nil
}

// recreate lets an IPAddress deleted while its claim lives go, keeping its address for the
// claim, so that the next attempt creates it again with the same name and values (the
// Cluster API contract's first option, for both kinds).
func (b *binder) recreate(ctx context.Context, claim client.Object, pool *ipamv1alpha1.IPPool, o client.Object) error {
	if a, _, _, ok := b.kind.holds(o); ok {
		if err := b.Registry.With(ctx, pool, func(s *poolState) error {
			s.keep(b.key(claim), a)
			return nil
		}); err != nil {
			return err
		}
	}
	return b.kind.addrFin.remove(ctx, b.Client, o)
}

// alreadyExists settles a create refused because the address's IPAddress exists: ours from
// an earlier attempt that timed out or that the cache does not show yet, or another
// claim's, which the allocator did not know.
func (b *binder) alreadyExists(ctx context.Context, claim client.Object, pool *ipamv1alpha1.IPPool, name string, a netip.Addr) (outcome, error) {
	got := b.kind.newObject()
	if err := b.APIReader.Get(ctx, client.ObjectKey{Namespace: claim.GetNamespace(), Name: name}, got); err != nil {
		// Gone meanwhile: try again with the same reservation.
		return outcome{retry: retryRace}, client.IgnoreNotFound(err)
	}
	ga, gclaim, gpool, ok := b.kind.holds(got)
	if ok && gclaim == claim.GetName() && gpool == pool.Name && ga == a {
		switch b.standingOf(got, claim) {
		case live:
			ctrl.LoggerFrom(ctx).Info(LogCreateLanded, "ipaddress", got.GetName())
			return bound(got.GetName()), nil
		case goingAway:
			return outcome{retry: retryRace}, b.recreate(ctx, claim, pool, got)
		case stale:
			return outcome{retry: retryRace}, release(ctx, b.Client, got, b.kind.addrFin)
		}
	}
	// Another holder. If it holds this address for this pool, the allocator had not
	// heard of it yet: record it as its events will. Otherwise it only has the name: that
	// of another pool with the same namePrefix, or, in a pool of both families, of the
	// address whose other-family spelling gives the same name (10.0.0.1 and 10:0:0:1::).
	// The address cannot be given in this pool while it exists; record that until the
	// object goes, then confirm it still exists, since its deletion may have been heard
	// before the record was made.
	h, isHolding := holdingOf(got)
	mine := isHolding && h.pool == client.ObjectKeyFromObject(pool) && h.addr == a
	if err := b.Registry.With(ctx, pool, func(s *poolState) error {
		if mine {
			s.add(h.addr, h.key, h.uid)
		} else {
			b.Registry.block(s, client.ObjectKeyFromObject(pool), a, got)
		}
		s.unpick(b.key(claim), a)
		return nil
	}); err != nil {
		return outcome{}, err
	}
	if !mine {
		again := b.kind.newObject()
		err := b.APIReader.Get(ctx, client.ObjectKeyFromObject(got), again)
		if apierrors.IsNotFound(err) || (err == nil && again.GetUID() != got.GetUID()) {
			b.Registry.unblock(got.GetUID())
		} else if err != nil {
			return outcome{}, err
		}
	}
	return outcome{retry: retryRace}, nil
}

// release lets the claim's addresses go, then its finalizers. It does nothing while another
// finalizer than ours is on the claim: its user (CAPM3 while the host uses the address)
// still needs the address, and the removal of that finalizer brings the claim back here.
func (b *binder) release(ctx context.Context, claim client.Object, pool *ipamv1alpha1.IPPool, poolName string) (time.Duration, error) {
	forgetAllocation(claim)
	if !b.kind.claimFin.on(claim) || !b.kind.claimFin.onlyOurs(claim) {
		return 0, nil
	}
	objs, err := b.byClaim(ctx, claim, poolName)
	if err != nil {
		return 0, err
	}
	if pool != nil {
		// The cache may not show an address created a moment ago; the allocator knows it.
		held, err := b.heldObject(ctx, claim, pool)
		if err != nil {
			return 0, err
		}
		if held != nil && !slices.ContainsFunc(objs, func(o client.Object) bool { return o.GetUID() == held.GetUID() }) {
			objs = append(objs, held)
		}
		if held != nil {
			_ = b.Registry.With(ctx, pool, func(s *poolState) error {
				s.settle(b.key(claim))
				return nil
			})
		}
	}
	for _, o := range objs {
		if err := release(ctx, b.Client, o, b.kind.addrFin); err != nil {
			return 0, err
		}
	}
	if pool != nil {
		var wait time.Duration
		if err := b.Registry.With(ctx, pool, func(s *poolState) error {
			if a, ok := s.held(b.key(claim)); ok {
				// A create whose answer did not prove failure may still land: until it
				// can no longer, the address stays reserved and the claim stays, so that
				// what lands is this claim's to release rather than an orphan sharing
				// the address with the next claim.
				if wait = s.unsettled(b.key(claim), time.Now()); wait > 0 {
					return nil
				}
				s.unpick(b.key(claim), a)
			}
			return nil
		}); err != nil {
			return 0, err
		}
		if wait > 0 {
			return min(wait, retryPool), nil
		}
	}
	return 0, b.kind.claimFin.remove(ctx, b.Client, claim)
}

// heldObject reads, past the cache, the IPAddress of the address the allocator holds for
// the claim, if it names the claim.
func (b *binder) heldObject(ctx context.Context, claim client.Object, pool *ipamv1alpha1.IPPool) (client.Object, error) {
	var a netip.Addr
	var ok bool
	if err := b.Registry.With(ctx, pool, func(s *poolState) error {
		a, ok = s.held(b.key(claim))
		return nil
	}); err != nil || !ok {
		return nil, err
	}
	o := b.kind.newObject()
	err := b.APIReader.Get(ctx, client.ObjectKey{Namespace: claim.GetNamespace(), Name: AddressName(pool.Spec.NamePrefix, a)}, o)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, c, p, ok := b.kind.holds(o); !ok || c != claim.GetName() || p != pool.Name {
		return nil, nil
	}
	return o, nil
}
