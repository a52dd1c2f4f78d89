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
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// latencyFloor is the p50 and p99 latency floor of the burst: the users' n VM creates as in
// the burst (16 parallel clients), and a plain client that reacts to each VM's creation as
// a controller with no logic would, its watch feeding the manager's 64 workers, with the
// three writes rackwire makes per VM; a watch of the claims, as in the burst, says when each
// had its status. No controller on this machine can do better than this while the users'
// creates run.
func latencyFloor(ctx context.Context, c, writer client.WithWatch, n int) ([2]time.Duration, error) {
	const prefix, subnet, workers = "vml", 63, 64
	seen := &allocations{ns: floorNS, at: map[string]time.Time{}, ips: map[string]string{}, made: map[string]time.Time{}}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := seen.watch(wctx, c); err != nil {
		return [2]time.Duration{}, err
	}
	var vms virtv1.VirtualMachineList
	if err := writer.List(ctx, &vms, client.InNamespace(floorNS)); err != nil {
		return [2]time.Duration{}, err
	}
	todo := make(chan int, n)
	go followVMs(wctx, writer, vms.ResourceVersion, prefix, todo)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-wctx.Done():
					return
				case i := <-todo:
					if err := floorWrites(wctx, writer, prefix, i, subnet); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	defer func() {
		stop()
		wg.Wait()
	}()
	created := make([]time.Time, n)
	if err := parallel(n, func(i int) error {
		created[i] = time.Now()
		return c.Create(ctx, floorVM(prefix, i))
	}); err != nil {
		return [2]time.Duration{}, err
	}
	for deadline := time.Now().Add(5 * time.Minute); seen.count() < n; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-errs:
			return [2]time.Duration{}, err
		default:
		}
		if time.Now().After(deadline) {
			return [2]time.Duration{}, fmt.Errorf("latency floor: %d of %d claims had their status after 5 minutes", seen.count(), n)
		}
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	lat := make([]time.Duration, n)
	for i := range n {
		lat[i] = seen.at[fmt.Sprintf("%s-%d.blue", prefix, i)].Sub(created[i])
	}
	return percentiles(lat), nil
}

// followVMs sends the index of every VM named prefix-<i> that the watch sees created.
func followVMs(ctx context.Context, c client.WithWatch, rv, prefix string, todo chan<- int) {
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, &virtv1.VirtualMachineList{}, client.InNamespace(floorNS), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			vm, ok := ev.Object.(*virtv1.VirtualMachine)
			if !ok {
				continue
			}
			rv = vm.ResourceVersion
			var i int
			if _, err := fmt.Sscanf(strings.TrimPrefix(vm.Name, prefix+"-"), "%d", &i); ev.Type == watch.Added && strings.HasPrefix(vm.Name, prefix+"-") && err == nil {
				todo <- i
			}
		}
		w.Stop()
	}
}
