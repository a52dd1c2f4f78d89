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
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// target is one range of an attachment as this node allocates from it: the IPPool that
// records it and the part of the range this node may hand out.
type target struct {
	rng Range
	// pool is the IPPool's name and poolRange its spec.range: the range, or in node-slice
	// mode this node's slice.
	pool      string
	poolRange netip.Prefix
}

// ErrExhausted is wrapped by the error of an ADD that found no free address.
var ErrExhausted = errors.New("no free address")

// targets resolves the pools of this node: one per range, or the node's slice.
func (c *call) targets(ctx context.Context) ([]target, error) {
	cfg := c.cfg
	if cfg.SliceSize == "" {
		out := make([]target, len(cfg.Ranges))
		for i, r := range cfg.Ranges {
			out[i] = target{rng: r, pool: PoolName(cfg.PoolNetwork(), "", r.Subnet), poolRange: r.Subnet}
		}
		return out, nil
	}
	slice, shared, ok, _ := c.cachedSlice()
	if !ok {
		var err error
		if slice, shared, err = c.readSliceOnce(ctx); err != nil {
			return nil, err
		}
	}
	if shared != "" && !cfg.WhereaboutsLease {
		return nil, fmt.Errorf("network %q: NodeSlicePool %s/%s is shared with whereabouts (NetworkAttachmentDefinition %s): set \"whereabouts_lease\": true in the ipam section of this network's rackwire NADs (ipam.whereabouts_lease), or rackwire would answer ADDs before writing a pool whereabouts allocates from too", cfg.Name, c.kube.namespace, cfg.SliceNetwork(), shared)
	}
	return []target{{rng: cfg.Ranges[0], pool: PoolName(cfg.PoolNetwork(), c.node, slice), poolRange: slice}}, nil
}

// readSliceOnce reads the node's slice for an ADD that found none cached, one such ADD at a
// time: the ADDs of a burst on a node that has no slice cached yet (its first pods, or a
// node idle past sliceCacheMax) all start without it, and each read the NodeSlicePool,
// sixteen reads of one object, each with its connection's handshake, where one does. The
// ones behind find it cached. The lock is the slice's own, not the node's: DELs, the
// flusher and ADDs past this point go on meanwhile.
//
// The lock only saves reads, so nothing waits on it for good: a read that hangs (its
// request lost, the apiserver slow to answer that one connection) holds it up to its own
// timeout, a NAD's timeout key that may be hours. An ADD behind it reads the slice itself
// after sliceLockWait, or half its own time left, whichever is less. A verb that holds the
// node's lock (a DEL that found no record) does not wait at all: every verb of the node and
// its flusher would wait behind it.
func (c *call) readSliceOnce(ctx context.Context) (netip.Prefix, string, error) {
	if c.st.lock != nil {
		return c.readSlice(ctx)
	}
	wait := sliceLockWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)/2)
	}
	if unlock, ok := c.st.tryLockFile(ctx, ".slice.lock", wait); ok {
		defer unlock()
		if slice, shared, ok, _ := c.cachedSlice(); ok {
			return slice, shared, nil
		}
	}
	return c.readSlice(ctx)
}

// sliceLockWait is the longest an ADD waits for another's read of the node's slice: the
// time one request is given (requestWait); a read still going past it is stuck.
const sliceLockWait = requestWait

// readSlice reads the node's slice from the network's NodeSlicePool, and keeps it, with the
// whereabouts NADs the manager found sharing it (cniconf.AnnotationSharedWithWhereabouts).
func (c *call) readSlice(ctx context.Context) (netip.Prefix, string, error) {
	cfg := c.cfg
	nsp := &wbv1.NodeSlicePool{}
	if err := c.kube.get(ctx, c.kube.wbPath("nodeslicepools", cfg.SliceNetwork()), nsp); err != nil {
		if apierrors.IsNotFound(err) {
			return netip.Prefix{}, "", fmt.Errorf("network %q: no NodeSlicePool %s/%s yet (rackwire's manager writes it from the NetworkAttachmentDefinition)", cfg.Name, c.kube.namespace, cfg.SliceNetwork())
		}
		return netip.Prefix{}, "", fmt.Errorf("network %q: reading NodeSlicePool %s: %w", cfg.Name, cfg.SliceNetwork(), err)
	}
	for _, a := range nsp.Status.Allocations {
		if a.NodeName != c.node {
			continue
		}
		slice, err := netip.ParsePrefix(a.SliceRange)
		if err != nil {
			return netip.Prefix{}, "", fmt.Errorf("network %q: NodeSlicePool %s: slice %q of node %s: %w", cfg.Name, nsp.Name, a.SliceRange, c.node, err)
		}
		slice = slice.Masked()
		if rng := cfg.Ranges[0].Subnet.Masked(); !inside(slice, rng) {
			// Another NAD of the same network_name with another range wrote the NodeSlicePool.
			return netip.Prefix{}, "", fmt.Errorf("network %q: slice %s of node %s in NodeSlicePool %s/%s (spec.range %s) lies outside this NAD's range %s: NADs that share network_name must share their range", cfg.Name, slice, c.node, c.kube.namespace, nsp.Name, nsp.Spec.Range, rng)
		}
		shared := nsp.Annotations[cniconf.AnnotationSharedWithWhereabouts]
		c.cacheSlice(slice, shared)
		return slice, shared, nil
	}
	return netip.Prefix{}, "", fmt.Errorf("network %q: node %s has no slice in NodeSlicePool %s/%s (all slices taken? see its NodesWithoutSlice condition)", cfg.Name, c.node, c.kube.namespace, nsp.Name)
}

// allocator is the free space of a target, given the pool's allocations.
func (c *call) allocator(t target, taken []string, claimed []netip.Addr) (*ipalloc.Pool, error) {
	conf := ipalloc.Config{Entries: []ipalloc.Entry{{Subnet: t.poolRange}}}
	// Bounds only where they cut the pool's range: in node-slice mode the slicer hands out
	// whole slices inside them already.
	first, last := t.poolRange.Addr(), lastAddr(t.poolRange)
	if s := t.rng.Start; s.IsValid() {
		if last.Less(s) {
			return nil, fmt.Errorf("%w in %s: it lies below range_start", ErrExhausted, t.poolRange)
		}
		if first.Less(s) {
			conf.Entries[0].Start = s
		}
	}
	if e := t.rng.End; e.IsValid() {
		if e.Less(first) {
			return nil, fmt.Errorf("%w in %s: it lies above range_end", ErrExhausted, t.poolRange)
		}
		if e.Less(last) {
			conf.Entries[0].End = e
		}
	}
	for _, x := range t.rng.Exclude {
		conf.Excluded = append(conf.Excluded, ipalloc.RangeOf(x))
	}
	for _, g := range c.cfg.Gateways {
		conf.Excluded = append(conf.Excluded, ipalloc.RangeOf(netip.PrefixFrom(g, g.BitLen())))
	}
	// whereabouts never hands out the last address of a range or of a node's slice, IPv6
	// included (its LastUsableIP is the one before the "broadcast"); ipalloc keeps the last
	// IPv6 address, so it is excluded here, so that both binaries agree on what is free.
	for _, pr := range []netip.Prefix{t.poolRange, t.rng.Subnet} {
		if pr.Addr().Is6() && pr.Bits() < 127 {
			last := lastAddr(pr)
			conf.Excluded = append(conf.Excluded, ipalloc.RangeOf(netip.PrefixFrom(last, last.BitLen())))
		}
	}
	p, err := ipalloc.NewPool(conf)
	if err != nil {
		return nil, fmt.Errorf("network %q: range %s: %w", c.cfg.Name, t.poolRange, err)
	}
	for _, key := range taken {
		if a, err := AtOffset(t.poolRange, key); err == nil && p.Contains(a) {
			_ = p.Reserve(a)
		}
	}
	for _, a := range claimed {
		if p.Contains(a) && !p.InUse(a) {
			_ = p.Reserve(a)
		}
	}
	return p, nil
}

// getPool reads an IPPool; nil when it does not exist yet.
func (c *call) getPool(ctx context.Context, name string) (*wbv1.IPPool, error) {
	p := &wbv1.IPPool{}
	err := c.kube.get(ctx, c.kube.wbPath("ippools", name), p)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading IPPool %s: %w", name, err)
	}
	return p, nil
}

// mine says whether a pool entry is this attachment's: its container and interface, the
// identity of an attachment in CNI.
func (c *call) mine(a wbv1.IPAllocation) bool {
	return a.ContainerID == c.containerID && a.IfName == c.ifName
}

func (c *call) podRef() string { return c.podNS + "/" + c.podName }

// allocate gives the attachment one address of t, recording the reservation in rec first.
func (c *call) allocate(ctx context.Context, t target, want netip.Addr, rec *record) (netip.Addr, error) {
	if addr, ok, err := c.again(ctx, t, rec); ok || err != nil {
		return addr, err
	}
	// The second lock: an address the pool or an IPAMClaim records for another holder is
	// never tried, whether or not its reservation is still there (claimguard.go).
	claims, err := c.claimedAddrs(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	others, err := c.siblingAddrs(ctx, t, c.targetsAll)
	if err != nil {
		return netip.Addr{}, err
	}
	claims = append(claims, others...)
	drained := false
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return netip.Addr{}, err
		}
		// A retry reads the pool; a first try may trust the node's view of it, a stale
		// one too when a flusher will read the pool behind this ADD.
		view := c.viewOf(t.pool, t.poolRange)
		if view != nil && view.stale() && !c.refreshedBehind() {
			view = nil
		}
		viewed := view != nil && attempt == 0
		// exists is a hint for record: a pool that turns out missing is created there.
		exists := view != nil
		if view == nil || attempt > 0 {
			pool, err := c.getPool(ctx, t.pool)
			if err != nil {
				return netip.Addr{}, err
			}
			view, exists = c.cachePool(t.pool, t.poolRange.String(), pool), pool != nil
		}
		space, err := c.allocator(t, view.keys(), claims)
		if err != nil {
			return netip.Addr{}, err
		}
		addr, err := c.pick(ctx, t, space, want, rec)
		if viewed && err != nil && (errors.Is(err, ErrExhausted) || want.IsValid()) {
			// The view may hold addresses freed elsewhere: only the pool itself says no.
			continue
		}
		if err != nil && !drained && (errors.Is(err, ErrExhausted) || want.IsValid()) {
			// DELs written behind free their addresses a little later: before saying no,
			// this ADD carries out those of the node still waiting for the flusher.
			drained = true
			if n, derr := c.releaseNow(ctx, rec); derr != nil || n > 0 {
				if derr != nil {
					return netip.Addr{}, derr
				}
				continue
			}
		}
		if err != nil {
			return netip.Addr{}, err
		}
		key := Offset(t.poolRange, addr)
		c.noteCached(t.pool, t.poolRange.String(), key, true)
		if c.deferred() {
			// Slept already, in reserveAside's window without the node's lock.
			return addr, c.markPending(rec, addr)
		}
		c.sleepForRace(ctx)
		done, err := c.record(ctx, t, exists, addr)
		if err != nil {
			return netip.Addr{}, err
		}
		if done {
			return addr, nil
		}
		// Someone recorded that address in the pool first (a whereabouts binary between its
		// reservation check and its pool write): let it go and start over from the pool.
		if err := c.unreserve(ctx, addr); err != nil {
			return netip.Addr{}, err
		}
		c.forget(rec, addr)
		if want.IsValid() {
			return netip.Addr{}, fmt.Errorf("ips: %s is taken in IPPool %s", want, t.pool)
		}
		if attempt > 100 {
			return netip.Addr{}, fmt.Errorf("network %q: IPPool %s kept changing under 100 attempts", c.cfg.Name, t.pool)
		}
	}
}

// again answers an ADD repeated for the same attachment: the address its record names in
// t's pool, if its reservation is still the attachment's (the pool entry is written again
// where it went missing).
func (c *call) again(ctx context.Context, t target, rec *record) (netip.Addr, bool, error) {
	for i, e := range rec.Entries {
		addr, err := netip.ParseAddr(e.Address)
		if e.Pool != t.pool || err != nil {
			continue
		}
		ref, err := c.reserve(ctx, addr)
		if errors.Is(err, errTaken) {
			c.forget(rec, addr)
			return netip.Addr{}, false, c.st.save(rec)
		} else if err != nil {
			return netip.Addr{}, false, err
		}
		rec.Entries[i].ReservationUID, rec.Entries[i].ReservationVersion = ref.uid, ref.rv
		if c.deferred() {
			return addr, true, c.markPending(rec, addr)
		}
		view := c.viewOf(t.pool, t.poolRange)
		done, err := c.record(ctx, t, view != nil && !view.stale(), addr)
		if err != nil || !done {
			return netip.Addr{}, false, err
		}
		return addr, true, nil
	}
	return netip.Addr{}, false, nil
}

// pick reserves a free address of space cluster-wide: the requested one, else the lowest
// free one whose reservation this call manages to create.
func (c *call) pick(ctx context.Context, t target, space *ipalloc.Pool, want netip.Addr, rec *record) (netip.Addr, error) {
	if want.IsValid() {
		if !space.Contains(want) {
			return netip.Addr{}, fmt.Errorf("ips: %s is not an address this node hands out in %s (range bounds, exclude, gateway, network or broadcast)", want, t.poolRange)
		}
		if space.InUse(want) {
			return netip.Addr{}, fmt.Errorf("ips: %s is already allocated: to another attachment in IPPool %s, to an IPAMClaim, or in another IPPool of network %q", want, t.pool, c.cfg.PoolNetwork())
		}
		if err := c.remember(rec, t, want); err != nil {
			return netip.Addr{}, err
		}
		if err := c.reserveAside(ctx, t, rec, want); err != nil {
			if errors.Is(err, errTaken) {
				return netip.Addr{}, fmt.Errorf("ips: %s is reserved by another holder (%v)", want, err)
			}
			return netip.Addr{}, err
		}
		return want, nil
	}
	for {
		addr, err := space.Allocate(ipalloc.Sequential)
		if errors.Is(err, ipalloc.ErrExhausted) {
			return netip.Addr{}, fmt.Errorf("network %q, node %s: %w in %s (IPPool %s/%s)", c.cfg.Name, c.node, ErrExhausted, t.poolRange, c.kube.namespace, t.pool)
		}
		if err != nil {
			return netip.Addr{}, err
		}
		if err := c.remember(rec, t, addr); err != nil {
			return netip.Addr{}, err
		}
		err = c.reserveAside(ctx, t, rec, addr)
		if err == nil {
			return addr, nil
		}
		if !errors.Is(err, errTaken) {
			return netip.Addr{}, err
		}
		c.forget(rec, addr)
		// Held without a pool entry (an IPAMClaim, or a reservation whose pool write is
		// behind): the node's view keeps it, so the next ADD does not try it again.
		c.noteCached(t.pool, t.poolRange.String(), Offset(t.poolRange, addr), true)
	}
}

var errTaken = errors.New("held by another reservation")

// reserveAside creates addr's reservation; where the pool is written behind the ADD, without
// the node's lock: the round trip to the apiserver is the longest part of an ADD, and the
// node's other ADDs, DELs and its flusher go on meanwhile. The address is first marked
// taken in the node's view and in the record (Reserving: the flusher does not write it
// yet), so that nothing of the node picks it meanwhile; the reservation itself is the lock
// against everyone else. The lock is held again when it returns.
func (c *call) reserveAside(ctx context.Context, t target, rec *record, addr netip.Addr) error {
	if !c.deferred() {
		ref, err := c.reserve(ctx, addr)
		noteReservation(rec, t.pool, addr, ref)
		return err
	}
	c.noteCached(t.pool, t.poolRange.String(), Offset(t.poolRange, addr), true)
	i := slices.IndexFunc(rec.Entries, func(e entry) bool { return e.Address == addr.String() && e.Pool == t.pool })
	if i < 0 || !rec.Entries[i].Reserving {
		// Not an entry remember just wrote (an address the record held before): mark it.
		if i >= 0 {
			rec.Entries[i].Pending, rec.Entries[i].Reserving = true, true
		}
		if err := c.st.save(rec); err != nil {
			return err
		}
	}
	if err := c.st.markPending(rec.ContainerID, rec.IfName); err != nil {
		return err
	}
	c.st.Unlock()
	ref, err := c.reserve(ctx, addr)
	if err == nil {
		c.sleepForRace(ctx)
	}
	if lerr := c.st.Lock(); lerr != nil {
		// Without the lock the record may by now be a retried ADD's: it is left, Reserving,
		// for the DEL or GC that follows a failed ADD, not rolled back by name.
		return fmt.Errorf("%w (%w)%s", lerr, errLeftToItsRelease, also(err))
	}
	cur, lerr := c.st.load(rec.ContainerID, rec.IfName)
	if lerr != nil {
		return fmt.Errorf("%w%s", lerr, also(err))
	}
	// Released meanwhile (GC took the record), or marked released by a DEL that has
	// answered: the caller must not save its own copy over that (nothing would release the
	// attachment again), so the ADD fails. The error does not wrap errTaken, which would
	// send the caller on to the next address.
	if cur == nil || cur.Gen != rec.Gen || !slices.ContainsFunc(cur.Entries, func(e entry) bool { return e.Address == addr.String() && e.Pool == t.pool }) {
		c.unreserveMade(addr, ref)
		return fmt.Errorf("network %q: %w: released while %s was being reserved%s", c.cfg.Name, errReleasedMeanwhile, addr, also(err))
	}
	if releasing(cur) {
		c.unreserveMade(addr, ref)
		return fmt.Errorf("network %q: %w: deleted while %s was being reserved%s", c.cfg.Name, errReleasedMeanwhile, addr, also(err))
	}
	// The caller saves rec next: it carries on from the record as it is now.
	*rec = *cur
	noteReservation(rec, t.pool, addr, ref)
	return err
}

// errReleasedMeanwhile is an ADD that found its attachment released by a DEL or GC while it
// reserved without the node's lock. What its record named is theirs to free, and by then
// the record and the reservations of the same names may be a retried ADD's (same container
// and interface): a rollback by name would free those, so the ADD has none.
var errReleasedMeanwhile = errors.New("the attachment is gone")

// unreserveMade deletes the reservation this ADD created for addr without the node's lock,
// that very object only (its UID and resourceVersion): the releaser of the attachment did
// not know it, and one of the same name may since be a retried ADD's.
func (c *call) unreserveMade(addr netip.Addr, ref reservationRef) {
	if ref.uid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestWait)
	defer cancel()
	// A failed delete leaves it, as it would leave a rollback's; a DEL still written behind
	// deletes it by name under the lock (checkReleased).
	_ = c.kube.delete(ctx, c.kube.wbPath("overlappingrangeipreservations", ReservationName(c.cfg.PoolNetwork(), addr)), ref.uid, ref.rv)
}

// sleepForRace is whereabouts' sleep_for_race, between an address's reservation and its
// pool entry. Where the pool is written behind the ADD it is slept without the node's lock:
// the NAD that sets it may be one tenant's among several of the network, and every other
// pod of the network on the node would wait out each of its sleeps.
func (c *call) sleepForRace(ctx context.Context) {
	if c.cfg.SleepForRace <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(c.cfg.SleepForRace) * time.Second):
	}
}

// also is err as the tail of another error's message, without wrapping it.
func also(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// reservationRef is the reservation object an ADD made or found its attachment's, as it
// then was: what a release written behind deletes, and nothing else.
type reservationRef struct{ uid, rv string }

// noteReservation records in rec addr's reservation, once it is the attachment's.
func noteReservation(rec *record, pool string, addr netip.Addr, ref reservationRef) {
	if ref.uid == "" {
		return
	}
	for i := range rec.Entries {
		if e := &rec.Entries[i]; e.Pool == pool && e.Address == addr.String() {
			e.ReservationUID, e.ReservationVersion = ref.uid, ref.rv
		}
	}
}

// reserve creates addr's OverlappingRangeIPReservation and returns it. errTaken means
// someone else's exists; an uncertain create that landed is recognised as ours on the retry.
func (c *call) reserve(ctx context.Context, addr netip.Addr) (reservationRef, error) {
	if !c.cfg.OverlappingRanges {
		// As whereabouts with enable_overlapping_ranges: false: no reservation; the pool
		// entry, written before the ADD answers (deferred is off), is the lock.
		return reservationRef{}, nil
	}
	name := ReservationName(c.cfg.PoolNetwork(), addr)
	orip := &wbv1.OverlappingRangeIPReservation{
		TypeMeta:   metav1.TypeMeta{APIVersion: wbv1.GroupVersion.String(), Kind: "OverlappingRangeIPReservation"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.kube.namespace},
		Spec:       wbv1.OverlappingRangeIPReservationSpec{ContainerID: c.containerID, PodRef: c.podRef(), IfName: c.ifName},
	}
	made := &metav1.PartialObjectMetadata{}
	err := c.kube.create(ctx, c.kube.wbPath("overlappingrangeipreservations", ""), orip, made)
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return reservationRef{}, fmt.Errorf("reserving %s: %w", addr, err)
		}
		return reservationRef{uid: string(made.UID), rv: made.ResourceVersion}, nil
	}
	cur := &wbv1.OverlappingRangeIPReservation{}
	if err := c.kube.get(ctx, c.kube.wbPath("overlappingrangeipreservations", name), cur); err != nil {
		if apierrors.IsNotFound(err) {
			// Released between our create and read: try the address again later.
			return reservationRef{}, fmt.Errorf("%w: %s was released meanwhile", errTaken, name)
		}
		return reservationRef{}, fmt.Errorf("reading reservation %s: %w", name, err)
	}
	if c.ownsReservation(cur) {
		return reservationRef{uid: string(cur.UID), rv: cur.ResourceVersion}, nil
	}
	return reservationRef{}, fmt.Errorf("%w: %s by %s", errTaken, name, c.holderName(cur.Spec.PodRef))
}

// holderName is how an error names another holder of an address: the kubelet copies an ADD's
// error into an Event of the pod, and a pod of another namespace may be another tenant's.
func (c *call) holderName(podRef string) string {
	if ns, _, ok := cutRef(podRef); ok && ns == c.podNS {
		return podRef
	}
	return "a pod of another namespace"
}

// ownsReservation says whether a reservation is this attachment's. whereabouts v0.9.4 writes
// none of the container id: its reservations are matched by pod and interface.
func (c *call) ownsReservation(o *wbv1.OverlappingRangeIPReservation) bool {
	if o.Spec.ContainerID == "" {
		return o.Spec.IfName == c.ifName && o.Spec.PodRef == c.podRef() && c.podName != ""
	}
	return o.Spec.ContainerID == c.containerID && o.Spec.IfName == c.ifName
}

// unreserve deletes addr's reservation if it is this attachment's.
func (c *call) unreserve(ctx context.Context, addr netip.Addr) error {
	return c.unreserveName(ctx, ReservationName(c.cfg.PoolNetwork(), addr))
}

// unreserveName deletes reservation name if it is this attachment's: read, then deleted
// only as it was read (UID and resourceVersion), so that one changed to another holder
// meanwhile stays; one changed otherwise is read again.
func (c *call) unreserveName(ctx context.Context, name string) error {
	for range 5 {
		cur := &wbv1.OverlappingRangeIPReservation{}
		err := c.kube.get(ctx, c.kube.wbPath("overlappingrangeipreservations", name), cur)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading reservation %s: %w", name, err)
		}
		if !c.ownsReservation(cur) {
			return nil
		}
		err = c.kube.delete(ctx, c.kube.wbPath("overlappingrangeipreservations", name), string(cur.UID), cur.ResourceVersion)
		if !apierrors.IsConflict(err) {
			if err != nil {
				return fmt.Errorf("releasing reservation %s: %w", name, err)
			}
			return nil
		}
	}
	return fmt.Errorf("releasing reservation %s: it kept changing under 5 reads", name)
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func allocPath(key string) string { return "/spec/allocations/" + escapePointer(key) }

// record writes addr into the pool, creating the pool if it does not exist (exists is what
// the caller believes; wrong either way, it costs a request). done is false
// when another holder recorded the address first.
func (c *call) record(ctx context.Context, t target, exists bool, addr netip.Addr) (bool, error) {
	key := Offset(t.poolRange, addr)
	alloc := wbv1.IPAllocation{ContainerID: c.containerID, PodRef: c.podRef(), IfName: c.ifName}
	for {
		if !exists {
			np := &wbv1.IPPool{
				TypeMeta:   metav1.TypeMeta{APIVersion: wbv1.GroupVersion.String(), Kind: "IPPool"},
				ObjectMeta: metav1.ObjectMeta{Name: t.pool, Namespace: c.kube.namespace},
				Spec:       wbv1.IPPoolSpec{Range: t.poolRange.String(), Allocations: map[string]wbv1.IPAllocation{key: alloc}},
			}
			err := c.kube.createPool(ctx, np)
			if err == nil {
				return true, nil
			}
			if !apierrors.IsAlreadyExists(err) {
				return false, fmt.Errorf("creating IPPool %s: %w", t.pool, err)
			}
		} else {
			err := c.kube.patchPool(ctx, t.pool, []patchOp{
				{Op: "test", Path: allocPath(key), Value: nil},
				{Op: "add", Path: allocPath(key), Value: alloc},
			})
			if err == nil {
				return true, nil
			}
			// A refusal (admission, validation) is no offset taken meanwhile: written again
			// it is refused again, until the timeout.
			if refusedForGood(err) || !apierrors.IsInvalid(err) && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return false, fmt.Errorf("recording %s in IPPool %s: %w", addr, t.pool, err)
			}
		}
		// The pool changed under us (created, or the offset written): read what it holds.
		cur, err := c.getPool(ctx, t.pool)
		if err != nil {
			return false, err
		}
		if cur != nil {
			if a, ok := cur.Spec.Allocations[key]; ok {
				return c.mine(a), nil
			}
			if cur.Spec.Allocations == nil {
				// A pool written without its allocations map takes the whole map in one add.
				err := c.kube.patchPool(ctx, t.pool, []patchOp{
					{Op: "test", Path: "/metadata/resourceVersion", Value: cur.ResourceVersion},
					{Op: "add", Path: "/spec/allocations", Value: map[string]wbv1.IPAllocation{key: alloc}},
				})
				if err == nil {
					return true, nil
				}
				if refusedForGood(err) {
					return false, fmt.Errorf("recording %s in IPPool %s: %w", addr, t.pool, err)
				}
				continue
			}
		}
		exists = cur != nil
	}
}

// remember notes addr's reservation in the attachment's record before it is created.
func (c *call) remember(rec *record, t target, addr netip.Addr) error {
	for _, e := range rec.Entries {
		if e.Address == addr.String() && e.Pool == t.pool {
			return nil
		}
	}
	// Where the pool is written behind, the entry is Reserving from the start: its
	// reservation is created with the node lock let go (reserveAside), and one write of the
	// record, each synced to disk, is enough before it.
	d := c.deferred()
	rec.Entries = append(rec.Entries, entry{Pool: t.pool, Range: t.poolRange.String(), Address: addr.String(),
		Reservation: ReservationName(c.cfg.PoolNetwork(), addr), Pending: d, Reserving: d})
	return c.st.save(rec)
}

// forget drops an address another holder turned out to own; the record is saved with the
// next write (a stale entry only costs a release that finds nothing of ours).
func (c *call) forget(rec *record, addr netip.Addr) {
	out := rec.Entries[:0]
	for _, e := range rec.Entries {
		if e.Address != addr.String() {
			out = append(out, e)
		}
	}
	rec.Entries = out
}
