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

package bench

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// measureCreateFloor is the floor that counts the user's create: the user's claim creates
// at the rate the rackwire runs make them (createWorkers), and, as each lands, the fewest
// writes an allocator can answer it with (IPAddress create, status patch) by a plain
// client with limitWorkers workers, all at full speed on the same apiserver. The claims are
// created with their finalizer, as the claim-finalizer admission policy puts it on, so no write of the
// floor's is one a faster allocator could drop: three writes per claim. The claims point at
// a pool kind rackwire does not serve, so the manager reconciles none of them but its
// webhooks stay in the write path, as for the limit.
func measureCreateFloor(ctx context.Context, e *env, n int) (limitResult, error) {
	ns, err := newNamespace(ctx, e, "bench-floor-")
	if err != nil {
		return limitResult{}, err
	}
	base := netip.MustParseAddr("10.0.0.2")
	addrs := make([]netip.Addr, n)
	for i := range addrs {
		addrs[i] = base
		base = base.Next()
	}
	created := make(chan *capiipamv1beta2.IPAddressClaim, n)
	var answered atomic.Int64
	var answerErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	before, cpuBefore := e.requests(ctx), e.cpuNow()
	start := time.Now()
	for range limitWorkers {
		wg.Go(func() {
			for c := range created {
				if err := retry(func() error { return answer(ctx, e, c, addrs[claimIndex(c.Name)]) }); err != nil {
					errOnce.Do(func() { answerErr = err })
					continue
				}
				answered.Add(1)
			}
		})
	}
	err = parallel(n, createWorkers, func(i int) error {
		c := &capiipamv1beta2.IPAddressClaim{}
		c.Namespace, c.Name = ns, fmt.Sprintf("floor-%d", i)
		c.Finalizers = []string{"ipam.metal3.io/ipclaim"}
		c.Spec.PoolRef = capiipamv1beta2.IPPoolReference{APIGroup: "bench.rackwire.io", Kind: "LimitPool", Name: "limit"}
		if err := e.c.Create(ctx, c); err != nil {
			return err
		}
		created <- c
		return nil
	})
	close(created)
	wg.Wait()
	took := time.Since(start).Seconds()
	used := e.cpuNow().since(cpuBefore)
	if err != nil {
		return limitResult{}, fmt.Errorf("the floor's creates: %w", err)
	}
	if answerErr != nil {
		return limitResult{}, fmt.Errorf("the floor's answers: %w", answerErr)
	}
	if got := answered.Load(); got != int64(n) {
		return limitResult{}, fmt.Errorf("the floor answered %d of %d claims", got, n)
	}
	writes := e.requests(ctx).Since(before).Writes()
	return limitResult{
		n: n, seconds: took, writesPerSec: float64(3*n) / took, claimsPerSec: float64(n) / took,
		apiserverRate: writes / took, cpu: used,
	}, nil
}

// answer is the allocator's part of the floor: the IPAddress, then the claim's status.
func answer(ctx context.Context, e *env, c *capiipamv1beta2.IPAddressClaim, addr netip.Addr) error {
	c = c.DeepCopy() // a retry starts from the claim as created
	ip := &capiipamv1beta2.IPAddress{}
	ip.Namespace, ip.Name = c.Namespace, c.Name
	ip.Finalizers = []string{"ipam.metal3.io/ipaddress"}
	ip.Spec = capiipamv1beta2.IPAddressSpec{
		ClaimRef: capiipamv1beta2.IPAddressClaimReference{Name: c.Name},
		PoolRef:  c.Spec.PoolRef,
		Address:  addr.String(), Prefix: ptr.To[int32](16), Gateway: "10.0.0.1",
	}
	if err := controllerutil.SetControllerReference(c, ip, e.c.Scheme()); err != nil {
		return err
	}
	if err := e.c.Create(ctx, ip); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	old := c.DeepCopy()
	c.Status.AddressRef = capiipamv1beta2.IPAddressReference{Name: ip.Name}
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{
		Type: capiipamv1beta2.IPAddressClaimReadyCondition, Status: metav1.ConditionTrue,
		Reason: "Allocated", Message: "address " + ip.Spec.Address + " allocated", ObservedGeneration: c.Generation,
	})
	return e.c.Status().Patch(ctx, c, client.MergeFrom(old))
}
