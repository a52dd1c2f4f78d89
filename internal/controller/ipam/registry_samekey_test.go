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

	"k8s.io/utils/ptr"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// Two IPAddress objects can give one holder key for one address: a copy of a claim's
// IPAddress under another name (by hand, by a restore, by a tenant who reads the claim's
// UID), or two that name the same claim without an owner reference. Each object holds the
// address until it is deleted: the deletion of one (binder.keepOne deletes the extra one
// itself) must not free the address the other still holds.
func TestDeletingOneOfTwoObjectsWithOneHolderKeyKeepsTheAddress(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry(emptyNamespace{}, true)
	pool := &ipamv1alpha1.IPPool{}
	pool.Namespace, pool.Name, pool.UID, pool.Generation = "ns", "p", "pool-uid", 1
	pool.Spec.NamePrefix = "p"
	pool.Spec.Pools = []ipamv1alpha1.Pool{{Start: ptr.To[ipamv1alpha1.IPAddressStr]("10.0.0.10"),
		End: ptr.To[ipamv1alpha1.IPAddressStr]("10.0.0.11"), Prefix: 24}}
	var a netip.Addr
	if err := reg.With(ctx, pool, func(s *poolState) error {
		var err error
		a, err = s.pick(kindMetal3, "x", "claim-1", netip.Addr{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	real := metal3Object("object-1", "x", "claim-1", a)
	reg.apply(real, true)
	cp := metal3Object("object-copy", "x", "claim-1", a)
	cp.Name = "copy-of-x"
	reg.apply(cp, true)
	reg.apply(cp, false)

	if err := reg.With(ctx, pool, func(s *poolState) error {
		if b, err := s.pick(kindCAPI, "y", "claim-2", netip.Addr{}); err != nil || b == a {
			t.Fatalf("IPAddress %s still holds %s for IPClaim x, yet IPAddressClaim y got %s (%v)", real.Name, a, b, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// An object that names a claim as owner at another address does not prove that the
// claim's own create, which answered ambiguously, failed: an owner reference can be
// written by anyone who reads the claim. Until the create is settled its address stays.
func TestAnotherObjectOfAClaimKeepsTheAddressOfItsInterruptedCreate(t *testing.T) {
	ctx := context.Background()
	reg := NewRegistry(emptyNamespace{}, true)
	pool := &ipamv1alpha1.IPPool{}
	pool.Namespace, pool.Name, pool.UID, pool.Generation = "ns", "p", "pool-uid", 1
	pool.Spec.NamePrefix = "p"
	pool.Spec.Pools = []ipamv1alpha1.Pool{{Start: ptr.To[ipamv1alpha1.IPAddressStr]("10.0.0.10"),
		End: ptr.To[ipamv1alpha1.IPAddressStr]("10.0.0.12"), Prefix: 24}}
	var a netip.Addr
	if err := reg.With(ctx, pool, func(s *poolState) error {
		var err error
		if a, err = s.pick(kindMetal3, "v", "claim-v", netip.Addr{}); err != nil {
			return err
		}
		// Its create timed out: it may still land.
		s.doubt(holderKey(kindMetal3, "v", "claim-v"), time.Now())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	other := metal3Object("object-forged", "v", "claim-v", netip.MustParseAddr("10.0.0.12"))
	other.Name = "forged"
	reg.apply(other, true)

	if err := reg.With(ctx, pool, func(s *poolState) error {
		if b, err := s.pick(kindCAPI, "y", "claim-y", netip.Addr{}); err != nil || b == a {
			t.Fatalf("the create of IPClaim v's %s may still land, yet IPAddressClaim y got %s (%v)", a, b, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
