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
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/ipalloc"
)

// Holder keys: who keeps an address. A claim's key is its kind, name and UID, so that
// the late DELETE of an earlier claim's object never frees the address under a claim that
// reuses the name; a pre-allocation's is "pre/" and the claim name it is kept for; an
// IPAddress that names no claim (an external reservation) is held under "IPAddress/" and
// its own name, and one that has the name this pool would give an address it does not
// hold under "name/" and its own name.
const (
	kindMetal3  = "IPClaim"
	kindCAPI    = "IPAddressClaim"
	kindPre     = "pre"
	kindAddress = "IPAddress"
	kindName    = "name"
)

func holderKey(kind, claim string, uid types.UID) string {
	return kind + "/" + claim + "/" + string(uid)
}

// uidPending marks a reservation whose IPAddress is not created (or not seen) yet, and
// uidPre a pre-allocation; events of real objects never carry either.
const (
	uidPending types.UID = ""
	uidPre     types.UID = "pre-allocated"
)

// Errors of a pick, told apart by the claim reconcilers for their condition reasons.
var (
	errPoolNotReady = errors.New("pool is not ready")
	errConflict     = errors.New("address conflict")
)

// Registry holds one allocator per IPPool. It is the only place that decides which address
// a claim gets: the apiserver is told afterwards, by creating the IPAddress.
type Registry struct {
	// live lists a pool's IPAddresses when its allocator is first built. Not the cache: a
	// new leader's informers may still be catching up after an apiserver restart, and an
	// allocator built from them would hand out an address whose IPAddress of the other
	// kind it has not seen yet, which the apiserver (names are unique per kind) cannot
	// refuse. Afterwards the informer events keep it current; a late event of an object
	// the listing already showed changes nothing.
	live client.Reader
	capi bool // the Cluster API IPAM API is installed

	mu    sync.Mutex
	pools map[types.NamespacedName]*poolState

	// wake receives the claims that waited for a free address, per claim kind, once one
	// may be free; the claim controllers watch them as channel sources.
	wake map[string]chan<- event.TypedGenericEvent[types.NamespacedName]

	// blocking lists, per IPAddress UID, the pools that recorded that object as blocking
	// one of their addresses (it has the name the pool would give the address, but is
	// another pool's or another address's). Its events go to its own pool only, so its
	// deletion is passed on from here.
	blockMu  sync.Mutex
	blocking map[types.UID]map[types.NamespacedName]struct{}
}

type claimRef struct {
	kind string
	key  types.NamespacedName
}

// poolState is one pool's allocator and who holds each of its used addresses. Claims of
// one pool serialise on mu, and only for the in-memory pick.
type poolState struct {
	mu         sync.Mutex
	uid        types.UID
	generation int64
	alloc      *ipalloc.Pool // nil while the spec is invalid
	specErrs   field.ErrorList
	strategy   ipalloc.Strategy
	spec       ipamv1alpha1.IPPoolSpec
	pre        map[string]netip.Addr
	holders    map[netip.Addr]map[string]types.UID
	byKey      map[string]netip.Addr
	waiters    map[claimRef]struct{}
	wake       map[string]chan<- event.TypedGenericEvent[types.NamespacedName]

	// ready is closed once the first listing is applied (buildErr says whether it failed);
	// until then events go to journal, to be applied after the listing.
	ready    chan struct{}
	buildErr error
	journal  []journalEntry

	// unsure holds, per holder key, when a create of its IPAddress last answered with an
	// error that did not prove failure, until its object is seen or the reservation goes.
	unsure map[string]time.Time
}

// CreateSettle is how long after an ambiguous answer (a timeout, a lost connection) a
// create is taken to have failed if its object has not shown up: the kube-apiserver's
// default --request-timeout, past which it abandons a request.
var CreateSettle = 60 * time.Second

type journalEntry struct {
	h       holding
	present bool
}

// NewRegistry returns a registry that builds pools from live listings of live, counting
// Cluster API IPAddresses when capi says their API is installed.
func NewRegistry(live client.Reader, capi bool) *Registry {
	return &Registry{live: live, capi: capi, pools: map[types.NamespacedName]*poolState{},
		wake: map[string]chan<- event.TypedGenericEvent[types.NamespacedName]{}, blocking: map[types.UID]map[types.NamespacedName]struct{}{}}
}

// wakeups is the source through which the controller of claims of kind hears that an
// address may be free. Call it before the manager starts.
func (r *Registry) wakeups(kind string) source.Source {
	ch := make(chan event.TypedGenericEvent[types.NamespacedName], 1024)
	r.wake[kind] = ch
	return source.TypedChannel(ch, handler.TypedEnqueueRequestsFromMapFunc(
		func(_ context.Context, k types.NamespacedName) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: k}}
		}))
}

// With runs fn on the allocator of pool, built (or rebuilt when the spec changed) from a
// live listing first. fn runs under the pool's lock and must not call the apiserver.
func (r *Registry) With(ctx context.Context, pool *ipamv1alpha1.IPPool, fn func(*poolState) error) error {
	s, err := r.state(ctx, pool)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if pool.Generation > s.generation {
		s.rebuild(pool)
	}
	return fn(s)
}

// state finds or builds the pool's state. The first build lists the namespace's
// IPAddresses page by page without holding the registry's lock, so that other pools are
// served meanwhile (after a failover every pool is built at once); the events that arrive
// during the listing are journaled and applied after it. That is sound because an event
// never precedes what it reports: an object the listing missed was deleted before it (its
// DELETE, if journaled, finds nothing to remove) or created after it (its ADD is
// journaled), and a removal matches one object UID, which is never reused.
func (r *Registry) state(ctx context.Context, pool *ipamv1alpha1.IPPool) (*poolState, error) {
	key := client.ObjectKeyFromObject(pool)
	r.mu.Lock()
	s, ok := r.pools[key]
	if !ok || s.uid != pool.UID {
		s = &poolState{
			uid:     pool.UID,
			holders: map[netip.Addr]map[string]types.UID{},
			byKey:   map[string]netip.Addr{},
			pre:     map[string]netip.Addr{},
			waiters: map[claimRef]struct{}{},
			wake:    r.wake,
			ready:   make(chan struct{}),
			unsure:  map[string]time.Time{},
		}
		r.pools[key] = s
		r.mu.Unlock()
		r.build(ctx, key, s, pool)
	} else {
		r.mu.Unlock()
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.buildErr != nil {
		return nil, s.buildErr
	}
	return s, nil
}

// buildPage is how many IPAddresses one page of the first listing holds.
const buildPage = 500

// build lists the pool's IPAddresses of both kinds and applies them and then the journal.
// A failed build leaves the registry, so that the next claim tries again.
func (r *Registry) build(ctx context.Context, key types.NamespacedName, s *poolState, pool *ipamv1alpha1.IPPool) {
	var found []holding
	err := r.listPaged(ctx, pool.Namespace, func() client.ObjectList { return &ipamv1alpha1.IPAddressList{} }, func(l client.ObjectList) {
		for i := range l.(*ipamv1alpha1.IPAddressList).Items {
			if h, ok := holdingOf(&l.(*ipamv1alpha1.IPAddressList).Items[i]); ok && h.pool == key {
				found = append(found, h)
			}
		}
	})
	if err == nil && r.capi {
		err = r.listPaged(ctx, pool.Namespace, func() client.ObjectList { return &capiipamv1beta2.IPAddressList{} }, func(l client.ObjectList) {
			for i := range l.(*capiipamv1beta2.IPAddressList).Items {
				if h, ok := holdingOf(&l.(*capiipamv1beta2.IPAddressList).Items[i]); ok && h.pool == key {
					found = append(found, h)
				}
			}
		})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(s.ready)
	if err != nil {
		s.buildErr = err
		r.mu.Lock()
		if r.pools[key] == s {
			delete(r.pools, key)
		}
		r.mu.Unlock()
		return
	}
	s.rebuild(pool)
	for _, h := range found {
		s.add(h.addr, h.key, h.uid)
	}
	for _, e := range s.journal {
		s.applyNow(e.h, e.present)
	}
	s.journal = nil
}

// listPaged lists a namespace page by page, handing each page to fn.
func (r *Registry) listPaged(ctx context.Context, ns string, newList func() client.ObjectList, fn func(client.ObjectList)) error {
	cont := ""
	for {
		l := newList()
		if err := r.live.List(ctx, l, client.InNamespace(ns), client.Limit(buildPage), client.Continue(cont)); err != nil {
			return err
		}
		fn(l)
		if cont = l.GetContinue(); cont == "" {
			return nil
		}
	}
}

// Forget drops a deleted pool's allocator.
func (r *Registry) Forget(pool types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pools, pool)
}

// built returns the state of a pool if a claim has used it already.
func (r *Registry) built(pool types.NamespacedName) *poolState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pools[pool]
}

// block records in s that the IPAddress obj (named as s would name a, but not holding a
// for s) keeps a from being handed out, until obj is deleted. The caller confirms
// afterwards that obj still exists (unblock otherwise): its deletion may have been heard
// before this record was made.
func (r *Registry) block(s *poolState, pool types.NamespacedName, a netip.Addr, obj client.Object) {
	r.blockMu.Lock()
	if r.blocking[obj.GetUID()] == nil {
		r.blocking[obj.GetUID()] = map[types.NamespacedName]struct{}{}
	}
	r.blocking[obj.GetUID()][pool] = struct{}{}
	r.blockMu.Unlock()
	s.add(a, holderKey(kindName, obj.GetName(), ""), obj.GetUID())
}

// unblock drops every record that the IPAddress uid blocks an address.
func (r *Registry) unblock(uid types.UID) {
	r.blockMu.Lock()
	pools := r.blocking[uid]
	delete(r.blocking, uid)
	r.blockMu.Unlock()
	for pool := range pools {
		s := r.built(pool)
		if s == nil {
			continue
		}
		s.mu.Lock()
		for a, h := range s.holders {
			for k, u := range h {
				if u == uid && strings.HasPrefix(k, kindName+"/") {
					s.remove(a, k, u)
				}
			}
		}
		s.mu.Unlock()
	}
}

// rebuild makes a new allocator from the spec and marks used again every address still
// held, so a spec change loses no reservation, not even one whose create is in flight.
func (s *poolState) rebuild(pool *ipamv1alpha1.IPPool) {
	s.generation = pool.Generation
	s.strategy = ipalloc.InOrder
	if pool.Spec.AllocationStrategy == ipamv1alpha1.AllocationRandom {
		s.strategy = ipalloc.RandomFirstFree
	}
	s.spec = *pool.Spec.DeepCopy()
	s.alloc, s.specErrs = BuildPool(&pool.Spec)
	pre, errs := PreAllocations(&pool.Spec, s.alloc)
	s.specErrs = append(s.specErrs, errs...)
	if len(s.specErrs) > 0 {
		s.alloc = nil
	}
	for a := range s.holders {
		if s.alloc != nil && s.alloc.Contains(a) {
			_ = s.alloc.Reserve(a)
		}
	}
	for claim, a := range s.pre {
		s.remove(a, holderKey(kindPre, claim, ""), uidPre)
	}
	s.pre = pre
	for claim, a := range pre {
		s.add(a, holderKey(kindPre, claim, ""), uidPre)
	}
	s.wakeAll()
}

// applyHolding applies an event of an IPAddress of this pool, or journals it while the
// first listing is under way.
func (s *poolState) applyHolding(h holding, present bool) {
	select {
	case <-s.ready:
	default:
		s.journal = append(s.journal, journalEntry{h, present})
		return
	}
	s.applyNow(h, present)
}

func (s *poolState) applyNow(h holding, present bool) {
	if present {
		s.add(h.addr, h.key, h.uid)
	} else {
		s.remove(h.addr, h.key, h.uid)
	}
}

// add records that key holds a. A reservation of key at another address whose object was
// never seen goes: the claim has a real object now, and holds one address.
func (s *poolState) add(a netip.Addr, key string, uid types.UID) {
	doubtful := false
	if old, ok := s.byKey[key]; ok && old != a && uid != uidPending && s.holders[old][key] == uidPending {
		if _, doubtful = s.unsure[key]; !doubtful {
			s.remove(old, key, uidPending)
		}
	}
	h := s.holders[a]
	if h == nil {
		h = map[string]types.UID{}
		s.holders[a] = h
		if s.alloc != nil && s.alloc.Contains(a) {
			_ = s.alloc.Reserve(a)
		}
	}
	if doubtful {
		// Another object of the claim, at another address, while the claim's own create may
		// still land: the pending address stays the claim's until that settles (its object
		// comes, or the doubt expires and the claim's reconcile lets it go), and this object
		// holds its address under a key of its own until its deletion.
		h[copyKey(key, uid)] = uid
		return
	}
	if old, ok := h[key]; ok && old != uidPending && uid != uidPending && old != uid {
		// A second object of the same holder at the same address (a copy under another
		// name): it holds the address until its own deletion, whichever goes first.
		h[copyKey(key, uid)] = uid
		return
	}
	if old, ok := h[key]; !ok || old == uidPending || uid != uidPending {
		h[key] = uid
	}
	if uid != uidPending {
		delete(s.unsure, key)
	}
	s.byKey[key] = a
}

// remove forgets that key holds a, if the holder is the object uid; the address is free
// once nobody holds it. An event of a deleted object thus never frees a reservation made
// since for the same claim.
func (s *poolState) remove(a netip.Addr, key string, uid types.UID) {
	h := s.holders[a]
	if got, ok := h[key]; !ok || got != uid {
		if h[copyKey(key, uid)] != uid || uid == uidPending {
			return
		}
		key = copyKey(key, uid)
	}
	delete(h, key)
	if s.byKey[key] == a {
		delete(s.byKey, key)
		delete(s.unsure, key)
	}
	if len(h) == 0 {
		delete(s.holders, a)
		if s.alloc != nil && s.alloc.Contains(a) {
			_ = s.alloc.Release(a)
		}
		s.wakeAll()
		return
	}
	// Only its pre-allocation left: the claim it is kept for, which may be waiting for
	// it, can have it now.
	if len(h) == 1 && strings.HasPrefix(slices.Collect(maps.Keys(h))[0], kindPre+"/") {
		s.wakeAll()
	}
}

// copyKey is the key under which a second object with key holds the same address.
func copyKey(key string, uid types.UID) string { return key + "#" + string(uid) }

// heldByOther reports whether anyone but the claims of kind named name, and the
// pre-allocation kept for that name, holds a.
func (s *poolState) heldByOther(a netip.Addr, kind, name string) bool {
	for k := range s.holders[a] {
		if !strings.HasPrefix(k, kind+"/"+name+"/") && k != holderKey(kindPre, name, "") {
			return true
		}
	}
	return false
}

// notOurs reports whether a claim of kind named name may not take a as the pool's answer:
// another holder has it, or the pool neither hands it out nor pre-allocates it to name.
func (s *poolState) notOurs(a netip.Addr, kind, name string) bool {
	return s.heldByOther(a, kind, name) || (s.alloc != nil && !s.alloc.Contains(a) && s.pre[name] != a)
}

// held returns the address key holds, if any.
func (s *poolState) held(key string) (netip.Addr, bool) {
	a, ok := s.byKey[key]
	return a, ok
}

// pick reserves an address for the claim kind/name/uid: the one it holds already, else its
// pre-allocation, else want (the address the claim asks for), else a free one.
func (s *poolState) pick(kind, name string, uid types.UID, want netip.Addr) (netip.Addr, error) {
	key := holderKey(kind, name, uid)
	if a, ok := s.byKey[key]; ok && (s.holders[a][key] == uidPending || !s.notOurs(a, kind, name)) {
		return a, nil
	}
	if s.alloc == nil {
		return netip.Addr{}, fmt.Errorf("%w: %v", errPoolNotReady, s.specErrs.ToAggregate())
	}
	preKey := holderKey(kindPre, name, "")
	pre, isPre := s.pre[name]
	if isPre {
		if want.IsValid() && want != pre {
			return netip.Addr{}, fmt.Errorf("%w: claim asks for %s but the pool pre-allocates %s to it", errConflict, want, pre)
		}
		want = pre
	}
	if !want.IsValid() {
		a, err := s.alloc.Allocate(s.strategy)
		if err != nil {
			return netip.Addr{}, err
		}
		s.holders[a] = map[string]types.UID{key: uidPending}
		s.byKey[key] = a
		return a, nil
	}
	if !isPre && !s.alloc.Contains(want) {
		return netip.Addr{}, fmt.Errorf("%w: %s is not an address the pool hands out", errConflict, want)
	}
	var others []string
	for other := range s.holders[want] {
		if other != preKey {
			others = append(others, other)
		}
	}
	if len(others) > 0 {
		// Name a claim rather than a pre-allocation when both hold it: that is whom to ask.
		isPre := func(k string) int {
			if strings.HasPrefix(k, kindPre+"/") {
				return 1
			}
			return 0
		}
		slices.SortFunc(others, func(a, b string) int { return cmp.Or(cmp.Compare(isPre(a), isPre(b)), cmp.Compare(a, b)) })
		return netip.Addr{}, fmt.Errorf("%w: %s is already held by %s", errConflict, want, describe(others[0]))
	}
	s.add(want, key, uidPending)
	return want, nil
}

// unpick drops a reservation whose IPAddress could not be created.
func (s *poolState) unpick(key string, a netip.Addr) {
	s.remove(a, key, uidPending)
}

// keep turns the claim's hold on a back into a pending one: its IPAddress is going away
// and will be created again with the same address, which nobody may take meanwhile.
func (s *poolState) keep(key string, a netip.Addr) {
	if h := s.holders[a]; h != nil {
		h[key] = uidPending
		s.byKey[key] = a
		return
	}
	s.add(a, key, uidPending)
}

// doubt records that a create of key's IPAddress answered ambiguously at now.
func (s *poolState) doubt(key string, now time.Time) {
	if a, ok := s.byKey[key]; ok && s.holders[a][key] == uidPending {
		s.unsure[key] = now
	}
}

// unsettled says how long key's pending reservation must still be kept because a create
// of its IPAddress may still land; zero when none may.
func (s *poolState) unsettled(key string, now time.Time) time.Duration {
	at, ok := s.unsure[key]
	if !ok {
		return 0
	}
	if wait := at.Add(CreateSettle).Sub(now); wait > 0 {
		return wait
	}
	delete(s.unsure, key)
	return 0
}

// settle drops the doubt about key's create: its object was found.
func (s *poolState) settle(key string) { delete(s.unsure, key) }

// params says what goes with a: prefix, gateway and DNS servers of its range.
func (s *poolState) params(a netip.Addr) ipalloc.Params {
	return paramsFor(&s.spec, s.alloc, a)
}

// wait registers a claim to be reconciled again once an address may be free.
func (s *poolState) wait(kind string, key types.NamespacedName) {
	s.waiters[claimRef{kind, key}] = struct{}{}
}

func (s *poolState) wakeAll() {
	for w := range s.waiters {
		if ch := s.wake[w.kind]; ch != nil {
			ev := event.TypedGenericEvent[types.NamespacedName]{Object: w.key}
			select {
			case ch <- ev:
			default:
				// The buffer is full: wake it later rather than block an informer.
				go func() { ch <- ev }()
			}
		}
		delete(s.waiters, w)
	}
}

// describe names a holder for people.
func describe(key string) string {
	kind, rest, _ := strings.Cut(key, "/")
	name, _, _ := strings.Cut(rest, "/")
	switch kind {
	case kindPre:
		return "the pre-allocation of claim " + name
	case kindAddress:
		return "IPAddress " + name + ", a reservation that names no claim"
	case kindName:
		return "IPAddress " + name + ", which has the name this address would get (another pool with the same namePrefix, " +
			"or the other family's spelling of the address)"
	}
	return kind + " " + name
}

// metal3Holder says who a Metal3 IPAddress holds its address for: its claim, or, when it
// names none, itself (an external reservation, which ip-address-manager counts too).
func metal3Holder(o *ipamv1alpha1.IPAddress) (netip.Addr, string, bool) {
	a, err := netip.ParseAddr(string(o.Spec.Address))
	if err != nil {
		return netip.Addr{}, "", false
	}
	if o.Spec.Claim.Name == "" {
		return a.Unmap(), holderKey(kindAddress, o.Name, ""), true
	}
	uid, _ := claimOwner(o, kindMetal3)
	return a.Unmap(), holderKey(kindMetal3, o.Spec.Claim.Name, uid), true
}

// capiHolder says which claim a Cluster API IPAddress holds its address for.
func capiHolder(o *capiipamv1beta2.IPAddress) (netip.Addr, string, bool) {
	a, err := netip.ParseAddr(o.Spec.Address)
	if err != nil || !ours(o.Spec.PoolRef) {
		return netip.Addr{}, "", false
	}
	name := o.Spec.ClaimRef.Name
	if name == "" {
		return a.Unmap(), holderKey(kindAddress, o.Name, ""), true
	}
	uid, _ := claimOwner(o, kindCAPI)
	return a.Unmap(), holderKey(kindCAPI, name, uid), true
}
