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
	"context"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// emptyNamespace is a live reader of a namespace without IPAddresses.
type emptyNamespace struct{}

func (emptyNamespace) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return nil
}

func (emptyNamespace) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

func metal3Object(uid types.UID, claim string, claimUID types.UID, a netip.Addr) *ipamv1alpha1.IPAddress {
	ip := &ipamv1alpha1.IPAddress{}
	ip.Namespace, ip.Name, ip.UID = "ns", AddressName("p", a), uid
	ip.OwnerReferences = []metav1.OwnerReference{{Kind: kindMetal3, Name: claim, UID: claimUID}}
	ip.Spec = ipamv1alpha1.IPAddressSpec{Address: ipamv1alpha1.IPAddressStr(a.String()),
		Pool: corev1.ObjectReference{Name: "p"}, Claim: corev1.ObjectReference{Name: claim}}
	return ip
}

// The informer's events come in order per kind, but a reconcile runs between them: a claim
// recreated under the same name may bind, and create its object, before the DELETE event
// of the old claim's object has arrived. That DELETE must not free the address the new
// object holds, which a claim of the other kind would then get (issue 30, item 3).
func TestLateDeleteOfAReusedClaimNameFreesNothingOfTheNewClaim(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry(emptyNamespace{}, true)
	pool := &ipamv1alpha1.IPPool{}
	pool.Namespace, pool.Name, pool.UID, pool.Generation = "ns", "p", "pool-uid", 1
	pool.Spec.NamePrefix = "p"
	pool.Spec.Pools = []ipamv1alpha1.Pool{{Start: ptr.To[ipamv1alpha1.IPAddressStr]("10.0.0.10"),
		End: ptr.To[ipamv1alpha1.IPAddressStr]("10.0.0.11"), Prefix: 24}}
	pick := func(kind, name string, uid types.UID) netip.Addr {
		var a netip.Addr
		if err := reg.With(ctx, pool, func(s *poolState) error {
			var err error
			a, err = s.pick(kind, name, uid, netip.Addr{})
			return err
		}); err != nil {
			t.Fatalf("pick for %s %s: %v", kind, name, err)
		}
		return a
	}

	first := pick(kindMetal3, "x", "claim-1")
	old := metal3Object("object-1", "x", "claim-1", first)
	reg.apply(old, true)

	// Claim x is deleted (its object's deletion is not heard yet) and created again.
	second := pick(kindMetal3, "x", "claim-2")
	// Its object is created; the old object's DELETE arrives before the new one's ADD.
	reg.apply(old, false)
	other := pick(kindCAPI, "y", "claim-3")
	reg.apply(metal3Object("object-2", "x", "claim-2", second), true)

	if other == second {
		t.Fatalf("the recreated IPClaim x and IPAddressClaim y both hold %s", other)
	}
}

// slowNamespace is a live reader whose listings of one namespace wait for release.
type slowNamespace struct {
	emptyNamespace
	slow    string
	entered chan struct{}
	release chan struct{}
	limits  chan int64
}

func (r slowNamespace) List(_ context.Context, _ client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	r.limits <- o.Limit
	if o.Namespace == r.slow {
		r.entered <- struct{}{}
		<-r.release
	}
	return nil
}

// After a failover every pool's allocator is built at once from a live listing of its
// namespace: a slow listing of one namespace must not hold up the pools of the others,
// and each listing comes in pages (issue 30, item 8).
func TestFirstBuildsOfPoolsDoNotWaitOnEachOther(t *testing.T) {
	ctx := context.Background()
	live := slowNamespace{slow: "slow", entered: make(chan struct{}, 4), release: make(chan struct{}), limits: make(chan int64, 16)}
	reg := NewRegistry(live, true)
	poolIn := func(ns string) *ipamv1alpha1.IPPool {
		p := &ipamv1alpha1.IPPool{}
		p.Namespace, p.Name, p.UID, p.Generation = ns, "p", types.UID(ns), 1
		p.Spec.Pools = []ipamv1alpha1.Pool{{Start: ptr.To[ipamv1alpha1.IPAddressStr]("10.0.0.10"),
			End: ptr.To[ipamv1alpha1.IPAddressStr]("10.0.0.11"), Prefix: 24}}
		return p
	}
	slowDone := make(chan error, 1)
	go func() { slowDone <- reg.With(ctx, poolIn("slow"), func(*poolState) error { return nil }) }()
	<-live.entered

	fastDone := make(chan error, 1)
	go func() { fastDone <- reg.With(ctx, poolIn("fast"), func(*poolState) error { return nil }) }()
	// Not a speed bound: the fast pool's build needs no more than its own listing, and
	// waits for the slow one forever if it waits at all.
	select {
	case err := <-fastDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the build of pool fast/p waited for the listing of namespace slow")
	}
	// An IPAddress created while the slow listing is under way, which the listing missed.
	during := metal3Object("object-during", "c", "claim-c", netip.MustParseAddr("10.0.0.10"))
	during.Namespace = "slow"
	reg.apply(during, true)
	close(live.release)
	if err := <-slowDone; err != nil {
		t.Fatal(err)
	}
	if err := reg.With(ctx, poolIn("slow"), func(s *poolState) error {
		if a, err := s.pick(kindCAPI, "d", "claim-d", netip.Addr{}); err != nil || a == netip.MustParseAddr(string(during.Spec.Address)) {
			t.Fatalf("after an IPAddress event during the first listing, the next pick is %s, %v", a, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	close(live.limits)
	for l := range live.limits {
		if l <= 0 {
			t.Fatalf("a first build listed a namespace unpaginated (limit %d)", l)
		}
	}
}
