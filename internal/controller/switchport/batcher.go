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
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// opKind is what a request asks of a switch.
type opKind int

const (
	opApply opKind = iota
	opRead
	opCheck
)

// op is one request: a change of a port, a read of a port, or a check of the switch.
type op struct {
	kind   opKind
	change switchdriver.Change // port and config, for opApply; port, for opRead
}

func applyOp(c switchdriver.Change) op { return op{kind: opApply, change: c} }
func readOp(port string) op            { return op{kind: opRead, change: switchdriver.Change{Port: port}} }

var checkOp = op{kind: opCheck}

func (o op) same(p op) bool {
	return o.kind == p.kind && o.change.Port == p.change.Port && equality.Semantic.DeepEqual(o.change.Config, p.change.Config)
}

type result struct {
	err  error
	read *networkv1alpha1.SwitchPortConfigurationSpec
}

// ticket is the one request a requester (a SwitchPort, a Switch) has on a switch.
type ticket struct {
	key     string
	op      op
	running bool
	done    bool
	out     result
	// waiter gets the result of a synchronous call.
	waiter chan result
}

// switchQueue holds the requests of one switch. Only its runner goroutine calls the
// driver, so one switch is never driven by two calls at once.
type switchQueue struct {
	driver switchdriver.Driver
	// source is what driver was built from, for Join.
	source  string
	pending []*ticket
	running bool
	// failed counts the runs in a row that failed as a whole; past the Batcher's threshold
	// no run starts before openUntil (the circuit breaker).
	failed    int
	openUntil time.Time
	// failingFor is how long those runs held the queue, idle time between them left out.
	failingFor time.Duration
	lastErr    error
	// lastSubmit is when the newest request arrived: a run starts once requests stop coming.
	lastSubmit time.Time
	// wakeAt is when the runner, waiting for requests to stop coming, looks at the queue
	// again; tests that drive the clock by hand step it only while the runner waits.
	wakeAt time.Time
}

// Batcher coalesces the requests of one switch into one driver call, and decouples them from
// the reconciles that make them: a reconcile hands its request over and returns, and it is
// woken when the run that carries the request ends. A hung switch therefore holds no
// reconcile worker, and costs its ports one run limit, not one per port. A run starts once no
// request has come for Window (requests arriving while a run is in flight wait for the next
// one), but no later than MaxWindow after it could have started: the ports of a burst meet in
// one run however long the burst takes to reach the switch's queue, and a steady stream of
// requests still gets runs. Switches run in parallel.
type Batcher struct {
	Window    time.Duration
	MaxWindow time.Duration
	Timeout   time.Duration
	// PerPort extends a call's limit for each port in it: a run's length grows with its
	// batch, and a limit fit for 24 ports would leave a hung switch hanging for long.
	PerPort time.Duration
	// MaxTimeout caps a call's limit whatever its number of ports, so that a hung switch
	// holds its queue (and its breaker's BreakAfter runs) for a bounded time.
	MaxTimeout time.Duration
	// BreakAfter whole-run failures in a row (unreachable, refused login, timed out) open a
	// switch's circuit: no run starts on it for BreakBase, doubling up to BreakMax, and its
	// requests fail at once with ErrCircuitOpen meanwhile.
	BreakAfter          int
	BreakBase, BreakMax time.Duration
	// BreakWithin opens the circuit too once a switch's runs that failed as a whole in a row
	// have lasted this long together (the time between them, when nothing ran, does not
	// count), however few they are: a hung switch's every run lasts its whole limit, so counting
	// runs alone would hold its queue for BreakAfter limits. A hung switch therefore holds
	// its queue at most max(BreakWithin, its first run's limit) before the circuit opens.
	BreakWithin time.Duration

	mu      sync.Mutex
	queues  map[types.NamespacedName]*switchQueue
	tickets map[string]*ticket
	wake    map[string]func(types.NamespacedName)
	syncs   atomic.Int64
	// expected are the requests on their way, by requester (expect.go).
	expected map[string]expectation
	// clock times the windows; tests drive it by hand, so that what they check does not
	// depend on how fast the machine runs them.
	clock clock.Clock
}

// NewBatcher returns a Batcher; timeout bounds each driver call.
func NewBatcher(window, timeout time.Duration) *Batcher {
	return &Batcher{
		Window: window, MaxWindow: 10 * window, Timeout: timeout, MaxTimeout: 2 * timeout, BreakAfter: 3, BreakWithin: timeout, BreakBase: 30 * time.Second, BreakMax: 10 * time.Minute,
		queues: map[types.NamespacedName]*switchQueue{}, tickets: map[string]*ticket{}, wake: map[string]func(types.NamespacedName){},
		clock: clock.RealClock{},
	}
}

// ErrCircuitOpen is the error of requests made while a switch's circuit is open.
var ErrCircuitOpen = errors.New("circuit open")

// OnDone registers who to wake when a request of a requester kind ("port", "switch") ends.
func (b *Batcher) OnDone(kind string, wake func(types.NamespacedName)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wake[kind] = wake
}

func requester(kind string, n types.NamespacedName) string {
	return kind + "/" + n.Namespace + "/" + n.Name
}

// Take returns the result of a requester's request once a run has ended it, and forgets
// it. pending is true while the request waits for, or is in, a run.
func (b *Batcher) Take(key string, o op) (out result, done, pending bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tickets[key]
	switch {
	case t == nil || !t.op.same(o):
		return result{}, false, false
	case t.done:
		delete(b.tickets, key)
		return t.out, true, false
	}
	return result{}, false, true
}

// Submit hands a request to the switch's next run. It replaces the requester's earlier
// request: a waiting one is dropped, a running one ends unheard. source names what d was
// built from (see Join); "" lets no later request join on d.
func (b *Batcher) Submit(key string, sw types.NamespacedName, d switchdriver.Driver, source string, o op) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.submitLocked(&ticket{key: key, op: o}, sw, d, source)
}

// Join hands a request to the switch's forming run and reports whether there was one whose
// driver was built from the same provider (source, the AnsibleSwitch as the requester sees it).
// A run's credentials are thus read once, for the first request of its burst: read for every
// port, they cost the apiserver one more request per port on the way to the run. A run under
// way does not count (nothing waits for the next one yet), so a rotated Secret is read again
// for the next burst, and a changed AnsibleSwitch never rides on a driver built before it.
func (b *Batcher) Join(key string, sw types.NamespacedName, source string, o op) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[sw]
	if source == "" || q == nil || len(q.pending) == 0 || q.driver == nil || q.source != source {
		return false
	}
	b.submitLocked(&ticket{key: key, op: o}, sw, q.driver, source)
	return true
}

func (b *Batcher) submit(t *ticket, sw types.NamespacedName, d switchdriver.Driver) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.submitLocked(t, sw, d, "")
}

func (b *Batcher) submitLocked(t *ticket, sw types.NamespacedName, d switchdriver.Driver, source string) {
	if old := b.tickets[t.key]; old != nil && !old.running && !old.done {
		q := b.queues[sw]
		for i, p := range q.pending {
			if p == old {
				q.pending = append(q.pending[:i], q.pending[i+1:]...)
				break
			}
		}
	}
	b.tickets[t.key] = t
	q := b.queues[sw]
	if q == nil {
		q = &switchQueue{}
		b.queues[sw] = q
	}
	// The newest driver wins: it carries the newest credentials.
	q.driver, q.source = d, source
	q.pending = append(q.pending, t)
	q.lastSubmit = b.clock.Now()
	if !q.running {
		q.running = true
		go b.run(sw, q)
	}
}

// TakeCheck returns the result of the Switch's check once a run has ended it.
func (b *Batcher) TakeCheck(sw types.NamespacedName) (done, pending bool, err error) {
	res, done, pending := b.Take(requester("switch", sw), checkOp)
	return done, pending, res.err
}

// SubmitCheck hands a check of the Switch to its next run; the Switch is woken when it ends.
func (b *Batcher) SubmitCheck(sw types.NamespacedName, d switchdriver.Driver) {
	b.Submit(requester("switch", sw), sw, d, "", checkOp)
}

// Breaker reports a switch's failed runs in a row and, while its circuit is open, until when.
func (b *Batcher) Breaker(sw types.NamespacedName) (failed int, openUntil time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if q := b.queues[sw]; q != nil {
		return q.failed, q.openUntil
	}
	return 0, time.Time{}
}

// Apply makes a change on the switch and waits for it, in a run shared with other requests
// (the state machine uses Submit and Take; a caller that can wait uses this).
func (b *Batcher) Apply(ctx context.Context, sw types.NamespacedName, d switchdriver.Driver, c switchdriver.Change) error {
	return b.wait(ctx, sw, d, applyOp(c)).err
}

func (b *Batcher) wait(ctx context.Context, sw types.NamespacedName, d switchdriver.Driver, o op) result {
	t := &ticket{key: "sync/" + strconv.FormatInt(b.syncs.Add(1), 10), op: o, waiter: make(chan result, 1)}
	b.submit(t, sw, d)
	select {
	case res := <-t.waiter:
		return res
	case <-ctx.Done():
		// The run still happens; its result is dropped.
		b.mu.Lock()
		if b.tickets[t.key] == t {
			delete(b.tickets, t.key)
		}
		b.mu.Unlock()
		return result{err: ctx.Err()}
	}
}

// run drains one switch's queue: each driver call takes every request pending once they
// stop arriving.
func (b *Batcher) run(sw types.NamespacedName, q *switchQueue) {
	for {
		b.settle(sw, q)
		b.mu.Lock()
		batch, d := q.pending, q.driver
		q.pending = nil
		if len(batch) == 0 {
			q.running = false
			if q.failed == 0 {
				delete(b.queues, sw)
			}
			b.mu.Unlock()
			return
		}
		var results []result
		open := b.clock.Now().Before(q.openUntil)
		if open {
			err := fmt.Errorf("%w: switch %s failed %d runs in a row, the last with: %w; the next run starts at %s",
				ErrCircuitOpen, sw, q.failed, q.lastErr, q.openUntil.UTC().Format(time.RFC3339))
			for range batch {
				results = append(results, result{err: err})
			}
		}
		for _, t := range batch {
			t.running = true
		}
		quiet := b.clock.Since(q.lastSubmit)
		b.mu.Unlock()
		// When a run starts after its requests, and how many it carries: a burst's time to
		// its run is otherwise only seen from outside.
		log.Log.WithName("switch-batcher").V(1).Info("switch run starts", "switch", sw.String(), "requests", len(batch), "sinceLastRequest", quiet.String())
		started := b.clock.Now()
		if !open {
			results = timedRun(sw, len(batch), func() []result { return b.drive(d, batch) })
		}
		b.finish(sw, q, batch, results, !open, started)
	}
}

// settle returns once no request has reached the queue for Window and none is expected (see
// Expect), or MaxWindow has passed.
func (b *Batcher) settle(sw types.NamespacedName, q *switchQueue) {
	deadline := b.clock.Now().Add(max(b.MaxWindow, b.Window))
	for {
		b.mu.Lock()
		now := b.clock.Now()
		wait := b.Window - now.Sub(q.lastSubmit)
		if b.expecting(sw) {
			wait = max(wait, expectPoll)
		}
		wait = min(wait, deadline.Sub(now))
		if wait <= 0 {
			b.mu.Unlock()
			return
		}
		tick := b.clock.After(wait)
		q.wakeAt = now.Add(wait)
		b.mu.Unlock()
		<-tick
	}
}

// finish hands the results to their requesters and keeps the switch's breaker.
func (b *Batcher) finish(sw types.NamespacedName, q *switchQueue, batch []*ticket, results []result, ran bool, started time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// A run that never reached the switch (it waited for a playbook process that other
	// switches held) neither counts against the switch nor closes its circuit.
	if ran && !neverStarted(results) {
		if wholeRunFailed(results) {
			q.failingFor += b.clock.Since(started)
			q.failed++
			q.lastErr = results[0].err
			byCount := q.failed >= b.BreakAfter && b.BreakAfter > 0
			byTime := b.BreakWithin > 0 && q.failingFor >= b.BreakWithin
			if byCount || byTime {
				q.openUntil = b.clock.Now().Add(min(b.BreakBase<<min(max(q.failed-b.BreakAfter, 0), 16), b.BreakMax))
				// The Switch says so in its condition.
				if wake := b.wake["switch"]; wake != nil {
					go wake(sw)
				}
			}
		} else {
			q.failed, q.openUntil, q.lastErr, q.failingFor = 0, time.Time{}, nil, 0
		}
	}
	for i, t := range batch {
		t.running, t.done, t.out = false, true, results[i]
		if t.waiter != nil {
			t.waiter <- t.out
			delete(b.tickets, t.key)
			continue
		}
		if b.tickets[t.key] != t {
			continue // superseded while it ran
		}
		kind, name := splitRequester(t.key)
		if wake := b.wake[kind]; wake != nil {
			go wake(name)
		}
	}
}

// wholeRunFailed reports whether a run failed as a whole, the switch not answering.
// neverStarted reports whether none of the run's results reached the switch.
func neverStarted(results []result) bool {
	if len(results) == 0 {
		return false
	}
	for _, r := range results {
		if !errors.Is(r.err, switchdriver.ErrNotStarted) {
			return false
		}
	}
	return true
}

func wholeRunFailed(results []result) bool {
	if len(results) == 0 {
		return false
	}
	for _, r := range results {
		if !errors.Is(r.err, switchdriver.ErrUnreachable) && !errors.Is(r.err, switchdriver.ErrTimeout) && !errors.Is(r.err, switchdriver.ErrAuthentication) {
			return false
		}
	}
	return true
}

func splitRequester(key string) (string, types.NamespacedName) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 {
		return key, types.NamespacedName{}
	}
	return parts[0], types.NamespacedName{Namespace: parts[1], Name: parts[2]}
}

// limit is a call's time limit: Timeout, plus PerPort for each port it changes (a read of
// every port of a switch is one command, whatever their number), at most MaxTimeout.
func (b *Batcher) limit(batch []*ticket) time.Duration {
	d := b.Timeout
	for _, t := range batch {
		if t.op.kind == opApply {
			d += b.PerPort
		}
	}
	if b.MaxTimeout > 0 {
		d = min(d, max(b.MaxTimeout, b.Timeout))
	}
	return d
}

// drive makes one driver call (an apply, then a read or check) for a batch and returns each
// ticket's result.
func (b *Batcher) drive(d switchdriver.Driver, batch []*ticket) []result {
	ctx, cancel := context.WithTimeout(context.Background(), b.limit(batch))
	defer cancel()
	var changes []switchdriver.Change
	var reads []string
	check := false
	// The last change of a physical port wins: its request is the newest.
	last := map[string]int{}
	for i, t := range batch {
		switch t.op.kind {
		case opApply:
			last[t.op.change.Port] = i
		case opRead:
			reads = append(reads, t.op.change.Port)
		case opCheck:
			check = true
		}
	}
	for i, t := range batch {
		if t.op.kind == opApply && last[t.op.change.Port] == i {
			changes = append(changes, t.op.change)
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
	out := make([]result, len(batch))
	for i, t := range batch {
		switch {
		case t.op.kind != opApply:
			out[i] = result{read: got[t.op.change.Port], err: readErr}
		case last[t.op.change.Port] != i:
			out[i] = result{err: errSuperseded}
		default:
			err, ok := applied[t.op.change.Port]
			if !ok {
				err = errNoAnswer
			}
			out[i] = result{err: err}
		}
	}
	return out
}
