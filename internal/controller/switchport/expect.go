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

package switchport

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// A burst of links reaches the manager's informer within its admission time, but on a busy
// manager the reconciles that turn them into requests can lag by more than a Window (the
// workers wait on the apiserver for the status writes of the burst's first ports): the run
// then starts without the burst's tail, which waits for a second run. The SwitchPort event
// handler therefore says which requests are on their way (Expect), each port's reconcile says
// when it has made its request or decided it needs none (Arrived), and a run does not start
// while requests are expected, up to MaxWindow.

// expectation is a port's request announced by an event of generation gen at the time at.
type expectation struct {
	sw  types.NamespacedName
	gen int64
	at  time.Time
}

// expectPoll is how often a forming run looks again while requests are expected.
const expectPoll = 20 * time.Millisecond

// Expect notes that the requester (a SwitchPort, key) will soon make a request on the switch:
// its object changed to generation gen and its reconcile is queued.
func (b *Batcher) Expect(sw types.NamespacedName, key string, gen int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.expected == nil {
		b.expected = map[string]expectation{}
	}
	b.expected[key] = expectation{sw: sw, gen: gen, at: b.clock.Now()}
}

// Arrived notes that the requester's reconcile of generation gen has run: any request it
// needed is in its switch's queue.
func (b *Batcher) Arrived(key string, gen int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.expected[key]; ok && e.gen <= gen {
		delete(b.expected, key)
	}
}

// expecting reports whether a request is on its way to the switch; expectations older than
// MaxWindow (a port deleted before its reconcile, say) are forgotten. b.mu is held.
func (b *Batcher) expecting(sw types.NamespacedName) bool {
	found := false
	for key, e := range b.expected {
		switch {
		case b.clock.Since(e.at) > max(b.MaxWindow, b.Window):
			delete(b.expected, key)
		case e.sw == sw:
			found = true
		}
	}
	return found
}

// portEvents enqueues a SwitchPort's own events, as For would, after telling the Batcher that
// a changed spec (a link, relink or unlink) brings a request to the switch of the port's
// record. Announcing it here, before the enqueue, means the port's reconcile always comes after
// its announcement and clears it.
func portEvents(b *Batcher) handler.EventHandler {
	enqueue := &handler.EnqueueRequestForObject{}
	return handler.Funcs{
		CreateFunc: enqueue.Create,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if p, ok := e.ObjectNew.(*networkv1alpha1.SwitchPort); ok && e.ObjectOld.GetGeneration() != p.Generation {
				if t, held := recordOf(p); held {
					b.Expect(t.sw, requester("port", client.ObjectKeyFromObject(p)), p.Generation)
				}
			}
			enqueue.Update(ctx, e, q)
		},
		DeleteFunc:  enqueue.Delete,
		GenericFunc: enqueue.Generic,
	}
}
