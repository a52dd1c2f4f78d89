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

package chaos

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
)

// interruptedCreates counts, in every replica's logs, the IPAddress creates whose answer
// a fault cut short, and those whose retry found they had landed.
func interruptedCreates(dir string) (interrupted, landed int, err error) {
	logs, err := filepath.Glob(filepath.Join(dir, "replica-*.log"))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			return 0, 0, err
		}
		interrupted += bytes.Count(data, []byte(ipam.LogCreateInterrupted))
		landed += bytes.Count(data, []byte(ipam.LogCreateLanded))
	}
	return interrupted, landed, nil
}

// claimObject is claim i of the churn's small pool: Metal3 for even i, Cluster API for odd.
func claimObject(pool string, i int) client.Object {
	if i%2 == 0 {
		m := &ipamv1alpha1.IPClaim{}
		m.Namespace, m.Name = ns, fmt.Sprintf("%s-m3-%d", pool, i)
		m.Spec.Pool = corev1.ObjectReference{Name: pool}
		return m
	}
	k := &capiipamv1beta2.IPAddressClaim{}
	k.Namespace, k.Name = ns, fmt.Sprintf("%s-capi-%d", pool, i)
	k.Spec.PoolRef = capiipamv1beta2.IPPoolReference{APIGroup: ipamv1alpha1.GroupVersion.Group, Kind: "IPPool", Name: pool}
	return k
}

// recreate deletes a claim and creates it again under the same name as soon as the old
// object is gone: the new claim may be reconciled before the old IPAddress's DELETE event.
func recreate(ctx context.Context, c client.Client, obj client.Object) error {
	if err := retry(ctx, func() error { return client.IgnoreNotFound(c.Delete(ctx, obj.DeepCopyObject().(client.Object))) }); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		err := c.Create(ctx, obj.DeepCopyObject().(client.Object))
		return err == nil, nil
	})
}

// poolUsage reads a pool's status.usage once its status reflects its spec.
func poolUsage(ctx context.Context, c client.Client, name string) (*ipamv1alpha1.IPPoolUsage, error) {
	p := &ipamv1alpha1.IPPool{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		return nil, err
	}
	if p.Status.Usage == nil || p.Status.ObservedGeneration != p.Generation {
		return nil, fmt.Errorf("pool %s has no current status yet", name)
	}
	return p.Status.Usage, nil
}

// boundClaims counts the claims of a pool that are Ready, and lists those that are not.
func boundClaims(ctx context.Context, c client.Client, pool string) (bound int, waiting []string, err error) {
	var m3 ipamv1alpha1.IPClaimList
	var capi capiipamv1beta2.IPAddressClaimList
	if err := c.List(ctx, &m3, client.InNamespace(ns)); err != nil {
		return 0, nil, err
	}
	if err := c.List(ctx, &capi, client.InNamespace(ns)); err != nil {
		return 0, nil, err
	}
	for _, cl := range m3.Items {
		if cl.Spec.Pool.Name != pool || !cl.DeletionTimestamp.IsZero() {
			continue
		}
		if cl.Status.Address != nil {
			bound++
		} else {
			waiting = append(waiting, cl.Name)
		}
	}
	for _, cl := range capi.Items {
		if cl.Spec.PoolRef.Name != pool || !cl.DeletionTimestamp.IsZero() {
			continue
		}
		if cl.Status.AddressRef.Name != "" {
			bound++
		} else {
			waiting = append(waiting, cl.Name)
		}
	}
	return bound, waiting, nil
}

// churn is the second phase, run while faults land: claims of the big pools released and
// created again under their names, the sequential pool edited, and a small pool filled
// past exhaustion, partly emptied and refilled. It returns the small pool's name and size.
func churn(ctx context.Context, c client.Client, reuse int) (string, int, error) {
	const small = "small"
	pool := &ipamv1alpha1.IPPool{}
	pool.Namespace, pool.Name = ns, small
	pool.Spec = ipamv1alpha1.IPPoolSpec{NamePrefix: small, AllocationStrategy: ipamv1alpha1.AllocationRandom,
		Pools: []ipamv1alpha1.Pool{{Start: ptr.To[ipamv1alpha1.IPAddressStr]("10.60.0.10"), End: ptr.To[ipamv1alpha1.IPAddressStr]("10.60.0.41"), Prefix: 24}}}
	if err := retry(ctx, func() error { return c.Create(ctx, pool) }); err != nil {
		return "", 0, err
	}
	const size = 32
	const extra = 6

	var wg sync.WaitGroup
	errs := make(chan error, 4*size+2*reuse+4)
	// Past exhaustion: size claims bind, extra wait.
	for i := range size + extra {
		wg.Go(func() {
			if err := retry(ctx, func() error { return c.Create(ctx, claimObject(small, i)) }); err != nil {
				errs <- err
			}
		})
	}
	// Names reused in the big pools, the first reuse claims of phase one.
	for i := range reuse {
		wg.Go(func() {
			obj := claimObject("", i)
			obj.SetName([]string{fmt.Sprintf("m3-%d", i), fmt.Sprintf("capi-%d", i)}[i%2])
			pool := []string{"random", "seq"}[(i/2)%2]
			if m, ok := obj.(*ipamv1alpha1.IPClaim); ok {
				m.Spec.Pool.Name = pool
			} else {
				obj.(*capiipamv1beta2.IPAddressClaim).Spec.PoolRef.Name = pool
			}
			if err := recreate(ctx, c, obj); err != nil {
				errs <- fmt.Errorf("recreating %s: %w", obj.GetName(), err)
			}
		})
	}
	// The sequential pool gains a second entry.
	wg.Go(func() {
		err := retry(ctx, func() error {
			p := &ipamv1alpha1.IPPool{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "seq"}, p); err != nil {
				return err
			}
			if len(p.Spec.Pools) > 1 {
				return nil
			}
			p.Spec.Pools = append(p.Spec.Pools, ipamv1alpha1.Pool{Subnet: ptr.To[ipamv1alpha1.IPSubnetStr]("10.51.0.0/24"), Prefix: 24})
			return c.Update(ctx, p)
		})
		if err != nil {
			errs <- fmt.Errorf("editing pool seq: %w", err)
		}
	})
	wg.Wait()

	// Exhausted: wait until size claims are bound, then release some and reuse their names.
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(context.Context) (bool, error) {
		bound, _, err := boundClaims(ctx, c, small)
		return err == nil && bound == size, nil
	}); err != nil {
		return "", 0, fmt.Errorf("the small pool never filled: %w", err)
	}
	for i := range 2 * extra {
		wg.Go(func() {
			if err := recreate(ctx, c, claimObject(small, i)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	// And back: the extra claims and a few more released, the pool has room again.
	for _, i := range append(seq(size, size+extra), seq(2*extra, 2*extra+4)...) {
		if err := retry(ctx, func() error { return client.IgnoreNotFound(c.Delete(ctx, claimObject(small, i))) }); err != nil {
			return "", 0, err
		}
	}
	close(errs)
	if err := <-errs; err != nil {
		return "", 0, err
	}
	return small, size, nil
}

// noneLost checks that the small pool's allocator lost no address: its status says free is
// its size minus its bound claims, and as many new claims as it says are free all bind.
func noneLost(ctx context.Context, c client.Client, small string, size int) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(context.Context) (bool, error) {
		bound, waiting, err := boundClaims(ctx, c, small)
		if err != nil {
			return false, nil
		}
		u, err := poolUsage(ctx, c, small)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("%d bound, waiting %v, usage %+v", bound, waiting, *u)
		return len(waiting) == 0 && u.Total == int64(size) && u.Free == int64(size-bound) && u.Used == int64(bound), nil
	})
	if err != nil {
		return fmt.Errorf("small pool after the churn: %s", last)
	}
	bound, _, err := boundClaims(ctx, c, small)
	if err != nil {
		return err
	}
	for i := range size - bound {
		obj := claimObject(small, 1000+i)
		if err := retry(ctx, func() error { return c.Create(ctx, obj) }); err != nil {
			return err
		}
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(context.Context) (bool, error) {
		b, waiting, err := boundClaims(ctx, c, small)
		last = fmt.Sprintf("%d of %d bound, waiting %v", b, size, waiting)
		return err == nil && b == size && len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("filling the small pool again, an address was lost in memory: %s", last)
	}
	return nil
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
