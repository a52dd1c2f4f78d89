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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// request is one port's wish, waiting for the next run on its switch.
type request struct {
	change *switchdriver.Change // nil for a read
	port   string
	done   chan result
}

type result struct {
	err  error
	read *networkv1alpha1.SwitchPortConfigurationSpec
}

// switchQueue holds the requests of one switch. Only its runner goroutine calls the
// driver, so one switch is never driven by two calls at once.
type switchQueue struct {
	driver  switchdriver.Driver
	pending []request
	running bool
}

// Batcher coalesces the changes to the ports of one switch into one driver call. A run
// collects requests for Window, so the port reconciles of a burst (48 ports linked by one
// kubectl apply) meet in one call instead of one playbook each; switches run in parallel.
type Batcher struct {
	Window  time.Duration
	Timeout time.Duration
	// PerPort extends a call's limit for each port in it: a run's length grows with its
	// batch, and a limit fit for 24 ports would leave a hung switch hanging for long.
	PerPort time.Duration

	mu     sync.Mutex
	queues map[types.NamespacedName]*switchQueue
}

// NewBatcher returns a Batcher; timeout bounds each driver call.
func NewBatcher(window, timeout time.Duration) *Batcher {
	return &Batcher{Window: window, Timeout: timeout, queues: map[types.NamespacedName]*switchQueue{}}
}

// Apply waits for the change to be made on the switch, in a run shared with other ports.
func (b *Batcher) Apply(ctx context.Context, sw types.NamespacedName, d switchdriver.Driver, c switchdriver.Change) error {
	r := b.submit(ctx, sw, d, request{change: &c, port: c.Port})
	return r.err
}

// Check asks the switch whether it answers with its credentials, between runs of ports.
func (b *Batcher) Check(ctx context.Context, sw types.NamespacedName, d switchdriver.Driver) error {
	return b.submit(ctx, sw, d, request{}).err
}

// Read returns what the switch holds for the port, read in a run shared with other ports.
func (b *Batcher) Read(ctx context.Context, sw types.NamespacedName, d switchdriver.Driver, port string) (*networkv1alpha1.SwitchPortConfigurationSpec, error) {
	r := b.submit(ctx, sw, d, request{port: port})
	return r.read, r.err
}

func (b *Batcher) submit(ctx context.Context, sw types.NamespacedName, d switchdriver.Driver, r request) result {
	r.done = make(chan result, 1)
	b.mu.Lock()
	q := b.queues[sw]
	if q == nil {
		q = &switchQueue{}
		b.queues[sw] = q
	}
	// The newest driver wins: it carries the newest credentials.
	q.driver = d
	q.pending = append(q.pending, r)
	if !q.running {
		q.running = true
		go b.run(sw, q)
	}
	b.mu.Unlock()
	select {
	case res := <-r.done:
		return res
	case <-ctx.Done():
		// The run still happens; its result is dropped and the next reconcile reads it back.
		return result{err: ctx.Err()}
	}
}

// run drains one switch's queue, a window's worth of requests per driver call.
func (b *Batcher) run(sw types.NamespacedName, q *switchQueue) {
	for {
		time.Sleep(b.Window)
		b.mu.Lock()
		batch, d := q.pending, q.driver
		q.pending = nil
		if len(batch) == 0 {
			q.running = false
			delete(b.queues, sw)
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.drive(d, batch)
	}
}

func (b *Batcher) drive(d switchdriver.Driver, batch []request) {
	ctx, cancel := context.WithTimeout(context.Background(), b.Timeout+time.Duration(len(batch))*b.PerPort)
	defer cancel()
	var changes []switchdriver.Change
	var reads []string
	check := false
	// The last change of a port wins: its reconcile saw the newest spec.
	last := map[string]int{}
	for i, r := range batch {
		switch {
		case r.change != nil:
			last[r.port] = i
		case r.port != "":
			reads = append(reads, r.port)
		default:
			check = true
		}
	}
	for i, r := range batch {
		if r.change != nil && last[r.port] == i {
			changes = append(changes, *r.change)
		}
	}
	var applied map[string]error
	if len(changes) > 0 {
		applied = d.Apply(ctx, changes)
	}
	var got map[string]*networkv1alpha1.SwitchPortConfigurationSpec
	var readErr error
	if len(reads) > 0 || check {
		got, readErr = d.Read(ctx, reads)
	}
	for i, r := range batch {
		switch {
		case r.change == nil:
			r.done <- result{read: got[r.port], err: readErr}
		case last[r.port] != i:
			r.done <- result{err: errSuperseded}
		default:
			err, ok := applied[r.port]
			if !ok {
				err = errNoAnswer
			}
			r.done <- result{err: err}
		}
	}
}
