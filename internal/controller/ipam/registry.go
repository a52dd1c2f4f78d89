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
	"net/netip"
	"slices"
	"strings"
	"sync"

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

// Holder keys: who keeps an address. A claim's key is its kind and name; a
// pre-allocation's is "pre/" and the claim name it is kept for.
const (
	kindMetal3 = "IPClaim"
	kindCAPI   = "IPAddressClaim"
	kindPre    = "pre"
)

func holderKey(kind, claim string) string { return kind + "/" + claim }

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
}

// NewRegistry returns a registry that builds pools from live listings of live, counting
// Cluster API IPAddresses when capi says their API is installed.
func NewRegistry(live client.Reader, capi bool) *Registry {
	return &Registry{live: live, capi: capi, pools: map[types.NamespacedName]*poolState{}, wake: map[string]chan<- event.TypedGenericEvent[types.NamespacedName]{}}
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

// With runs fn on the allocator of pool, built (or rebuilt when the spec changed) from the
// cache first. fn runs under the pool's lock and must not call the apiserver.
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

// state finds or builds the pool's state. The registry lock is held across the first build
// so that no IPAddress event slips between the listing and the first event applied.
func (r *Registry) state(ctx context.Context, pool *ipamv1alpha1.IPPool) (*poolState, error) {
	key := client.ObjectKeyFromObject(pool)
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.pools[key]; ok && s.uid == pool.UID {
		return s, nil
	}
	s := &poolState{
		uid:     pool.UID,
		holders: map[netip.Addr]map[string]types.UID{},
		byKey:   map[string]netip.Addr{},
		pre:     map[string]netip.Addr{},
		waiters: map[claimRef]struct{}{},
		wake:    r.wake,
	}
	s.rebuild(pool)
	var m3 ipamv1alpha1.IPAddressList
	if err := r.live.List(ctx, &m3, client.InNamespace(pool.Namespace)); err != nil {
		return nil, err
	}
	for i := range m3.Items {
		if a, key, ok := metal3Holder(&m3.Items[i]); ok && m3.Items[i].Spec.Pool.Name == pool.Name {
			s.add(a, key, m3.Items[i].UID)
		}
	}
	if r.capi {
		var capi capiipamv1beta2.IPAddressList
		if err := r.live.List(ctx, &capi, client.InNamespace(pool.Namespace)); err != nil {
			return nil, err
		}
		for i := range capi.Items {
			if a, key, ok := capiHolder(&capi.Items[i]); ok && capi.Items[i].Spec.PoolRef.Name == pool.Name {
				s.add(a, key, capi.Items[i].UID)
			}
		}
	}
	r.pools[key] = s
	return s, nil
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

// rebuild makes a new allocator from the spec and marks used again every address still
// held, so a spec change loses no reservation, not even one whose create is in flight.
func (s *poolState) rebuild(pool *ipamv1alpha1.IPPool) {
	s.generation = pool.Generation
	s.strategy = ipalloc.InOrder
	if pool.Spec.AllocationStrategy == ipamv1alpha1.AllocationRandom {
		s.strategy = ipalloc.Random
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
		s.remove(a, holderKey(kindPre, claim), uidPre)
	}
	s.pre = pre
	for claim, a := range pre {
		s.add(a, holderKey(kindPre, claim), uidPre)
	}
	s.wakeAll()
}

// add records that key holds a. A reservation of key at another address whose object was
// never seen goes: the claim has a real object now, and holds one address.
func (s *poolState) add(a netip.Addr, key string, uid types.UID) {
	if old, ok := s.byKey[key]; ok && old != a && uid != uidPending && s.holders[old][key] == uidPending {
		s.remove(old, key, uidPending)
	}
	h := s.holders[a]
	if h == nil {
		h = map[string]types.UID{}
		s.holders[a] = h
		if s.alloc != nil && s.alloc.Contains(a) {
			_ = s.alloc.Reserve(a)
		}
	}
	if old, ok := h[key]; !ok || old == uidPending || uid != uidPending {
		h[key] = uid
	}
	s.byKey[key] = a
}

// remove forgets that key holds a, if the holder is the object uid; the address is free
// once nobody holds it. An event of a deleted object thus never frees a reservation made
// since for the same claim.
func (s *poolState) remove(a netip.Addr, key string, uid types.UID) {
	h := s.holders[a]
	if got, ok := h[key]; !ok || got != uid {
		return
	}
	delete(h, key)
	if s.byKey[key] == a {
		delete(s.byKey, key)
	}
	if len(h) == 0 {
		delete(s.holders, a)
		if s.alloc != nil && s.alloc.Contains(a) {
			_ = s.alloc.Release(a)
		}
		s.wakeAll()
	}
}

// held returns the address key holds, if any.
func (s *poolState) held(key string) (netip.Addr, bool) {
	a, ok := s.byKey[key]
	return a, ok
}

// pick reserves an address for the claim kind/name: the one it holds already, else its
// pre-allocation, else want (the address the claim asks for), else a free one.
func (s *poolState) pick(kind, name string, want netip.Addr) (netip.Addr, error) {
	key := holderKey(kind, name)
	if a, ok := s.byKey[key]; ok {
		return a, nil
	}
	if s.alloc == nil {
		return netip.Addr{}, fmt.Errorf("%w: %v", errPoolNotReady, s.specErrs.ToAggregate())
	}
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
		if other != holderKey(kindPre, name) {
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
func (s *poolState) unpick(kind, name string, a netip.Addr) {
	s.remove(a, holderKey(kind, name), uidPending)
}

// keep turns the claim's hold on a back into a pending one: its IPAddress is going away
// and will be created again with the same address, which nobody may take meanwhile.
func (s *poolState) keep(kind, name string, a netip.Addr) {
	if h := s.holders[a]; h != nil {
		h[holderKey(kind, name)] = uidPending
		s.byKey[holderKey(kind, name)] = a
		return
	}
	s.add(a, holderKey(kind, name), uidPending)
}

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

func describe(key string) string {
	kind, name, _ := strings.Cut(key, "/")
	if kind == kindPre {
		return "the pre-allocation of claim " + name
	}
	return kind + " " + name
}

// metal3Holder says which claim a Metal3 IPAddress holds its address for.
func metal3Holder(o *ipamv1alpha1.IPAddress) (netip.Addr, string, bool) {
	a, err := netip.ParseAddr(string(o.Spec.Address))
	if err != nil || o.Spec.Claim.Name == "" {
		return netip.Addr{}, "", false
	}
	return a.Unmap(), holderKey(kindMetal3, o.Spec.Claim.Name), true
}

// capiHolder says which claim a Cluster API IPAddress holds its address for.
func capiHolder(o *capiipamv1beta2.IPAddress) (netip.Addr, string, bool) {
	a, err := netip.ParseAddr(o.Spec.Address)
	if err != nil || !ours(o.Spec.PoolRef) {
		return netip.Addr{}, "", false
	}
	name := o.Spec.ClaimRef.Name
	if name == "" {
		name = o.Name
	}
	return a.Unmap(), holderKey(kindCAPI, name), true
}
