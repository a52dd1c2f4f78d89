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
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// +kubebuilder:rbac:groups=metal3.io,resources=switchports,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=switchports/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=switchports/finalizers,verbs=update
// +kubebuilder:rbac:groups=metal3.io,resources=switchportconfigurations;switchresourcelimits;switches;ansibleswitches,verbs=get;list;watch
// Credentials are read one Secret at a time, straight from the apiserver (see switches'
// provider.go for the verbs); no Secret is listed, watched or cached.

// Reconciler runs the SwitchPort state machine.
type Reconciler struct {
	client.Client
	Recorder events.EventRecorder
	Drivers  switchdriver.Factory
	Batcher  *Batcher
	// Secrets reads credentials without a cache.
	Secrets client.Reader
	// DriftInterval is how often an Active port is read back from its switch.
	DriftInterval time.Duration
	// RetryBase and RetryMax bound the backoff after a driver failure.
	RetryBase, RetryMax time.Duration

	mu       sync.Mutex
	failures map[types.NamespacedName]int
	// notBefore is when a port that failed may next send a request to its switch.
	notBefore map[types.NamespacedName]time.Time
	// written is the status each port was last given here. This reconciler is the only
	// writer of SwitchPort status, so a cached status that differs is one the cache has not
	// caught up with; acting on it would repeat a switch run (a second clean, say).
	written map[types.NamespacedName]writtenStatus
	// reads is when each physical port was last read back: a port read in its switch's
	// drift round is not read again because some other object's event woke its SwitchPort.
	reads map[string]time.Time
	// rounds is when each switch's current drift round started (see readDue).
	rounds map[types.NamespacedName]time.Time
}

// readDue reports whether the physical port is due a read-back in its switch's current drift
// round, and marks it read if so. A round starts when the first port of the switch is due
// after the previous round's interval; every port of the switch is due once per round, and
// steady ports are requeued to the start of the next round (nextRound), so the switch's
// ports are read together, in one run per interval, however their reconciles are spread.
func (r *Reconciler) readDue(t target) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reads == nil {
		r.reads, r.rounds = map[string]time.Time{}, map[types.NamespacedName]time.Time{}
	}
	now := time.Now()
	round, ok := r.rounds[t.sw]
	if !ok || now.Sub(round) >= r.DriftInterval {
		round = now
		r.rounds[t.sw] = round
	}
	if last, ok := r.reads[t.key()]; ok && !last.Before(round) {
		return false
	}
	r.reads[t.key()] = now
	return true
}

// nextRound is how long until the switch's next drift round: when a steady port comes back.
func (r *Reconciler) nextRound(sw types.NamespacedName) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	round, ok := r.rounds[sw]
	if !ok {
		return r.DriftInterval
	}
	// A little past the round's end, so the first port back starts the next round.
	return max(time.Until(round.Add(r.DriftInterval)), 0) + roundSlack
}

// roundSlack is how long after a round's interval its ports come back.
const roundSlack = 10 * time.Millisecond

// forgetRead makes the next read-back of the physical port due at once: it was just changed.
func (r *Reconciler) forgetRead(t target) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.reads, t.key())
}

type writtenStatus struct {
	uid    types.UID
	status networkv1alpha1.SwitchPortStatus
	at     time.Time
}

// staleWindow bounds how long a cached status may lag behind the one written before the
// reconciler stops waiting for it (someone else wrote the status, after all).
const staleWindow = 10 * time.Second

// stale reports whether the cache has yet to show the status this reconciler last wrote.
func (r *Reconciler) stale(port *networkv1alpha1.SwitchPort) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.written[client.ObjectKeyFromObject(port)]
	if !ok || w.uid != port.UID || time.Since(w.at) > staleWindow {
		return false
	}
	return !equality.Semantic.DeepEqual(w.status, port.Status)
}

func (r *Reconciler) wrote(port *networkv1alpha1.SwitchPort) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written == nil {
		r.written = map[types.NamespacedName]writtenStatus{}
	}
	r.written[client.ObjectKeyFromObject(port)] = writtenStatus{uid: port.UID, status: *port.Status.DeepCopy(), at: time.Now()}
}

// machine is one reconcile's view of a port: the object and what it refers to.
type machine struct {
	port     *networkv1alpha1.SwitchPort
	deleting bool
	// sw and entry are the one Switch entry that names the port; nil when none does, and
	// vouch then says why.
	sw    *networkv1alpha1.Switch
	entry *networkv1alpha1.PortInfo
	vouch string
	// driven and provider are the Switch and AnsibleSwitch of the reconcile's driver call,
	// where the driver's full error is reported.
	driven   *networkv1alpha1.Switch
	provider *networkv1alpha1.AnsibleSwitch
}

// entryTarget is the physical port the port's Switch entry names; only for a vouched port.
func (m *machine) entryTarget() target {
	return target{sw: client.ObjectKeyFromObject(m.sw), port: m.entry.Name}
}

// Reconcile advances one SwitchPort through its state machine.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	port := &networkv1alpha1.SwitchPort{}
	if err := r.Get(ctx, req.NamespacedName, port); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if port.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(port, Finalizer) {
		base := port.DeepCopy()
		controllerutil.AddFinalizer(port, Finalizer)
		return ctrl.Result{}, r.Patch(ctx, port, client.MergeFrom(base))
	}
	if r.stale(port) {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	// Whatever request this generation needs is made below (or none is): a forming run on
	// the port's switch no longer waits for it.
	defer r.Batcher.Arrived(requester("port", req.NamespacedName), port.Generation)
	base := port.DeepCopy()
	m, err := r.load(ctx, port)
	if err != nil {
		return ctrl.Result{}, err
	}

	state := port.Status.State
	if m.deleting {
		state = deletionState(port)
	}
	var o outcome
	// A few steps per reconcile: the instant transitions (Idle -> Configuring on a link)
	// need no round trip through the apiserver.
	for range 4 {
		o = handlers[state](ctx, r, m)
		if o.gone {
			return ctrl.Result{}, nil
		}
		if o.keep {
			break
		}
		r.note(m, state, o)
		if !o.then || o.next == state {
			break
		}
		state = o.next
	}

	if !equality.Semantic.DeepEqual(base.Status, port.Status) {
		if err := r.Status().Patch(ctx, port, client.MergeFrom(base)); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.wrote(port)
	}
	return ctrl.Result{RequeueAfter: r.after(req.NamespacedName, o)}, nil
}

// deletionState is where a port being deleted goes: a port whose physical port may hold
// anything but its clean state is cleaned first, even a half-configured one.
func deletionState(port *networkv1alpha1.SwitchPort) networkv1alpha1.SwitchPortState {
	switch s := port.Status.State; {
	case s == cleaning || s == deleting:
		return s
	case !heldClean(port):
		return cleaning
	default:
		return deleting
	}
}

// heldClean reports whether the port's physical port, if it has one, holds its clean state.
func heldClean(port *networkv1alpha1.SwitchPort) bool {
	_, ok := recordOf(port)
	return !ok || port.Status.Clean != ""
}

// heldUnknown reports whether the physical port may hold anything: a run that did not report.
func heldUnknown(port *networkv1alpha1.SwitchPort) bool {
	_, ok := recordOf(port)
	return ok && port.Status.Clean == "" && port.Status.Configuration == nil
}

// holdsTenant reports whether the physical port holds a tenant's configuration.
func holdsTenant(port *networkv1alpha1.SwitchPort) bool {
	_, ok := recordOf(port)
	return ok && port.Status.Clean == "" && port.Status.Configuration != nil
}

// note records an outcome in the status and, when it is news, as an Event. The driver's
// full error goes on the Switch and the AnsibleSwitch, which only the infra team reads.
func (r *Reconciler) note(m *machine, from networkv1alpha1.SwitchPortState, o outcome) {
	port := m.port
	record(port, o)
	countDrift(port, o)
	if o.warn || o.event || (o.next != from && !o.asked) {
		r.Recorder.Eventf(port, nil, eventType(o), o.reason, string(o.next), "%s", o.message)
	}
	if o.detail == "" {
		return
	}
	if m.driven != nil {
		r.Recorder.Eventf(m.driven, port, corev1.EventTypeWarning, o.reason, string(o.next), "SwitchPort %s/%s: %s", port.Namespace, port.Name, o.detail)
	}
	if m.provider != nil {
		r.Recorder.Eventf(m.provider, port, corev1.EventTypeWarning, o.reason, string(o.next), "SwitchPort %s/%s: %s", port.Namespace, port.Name, o.detail)
	}
}

// after is the requeue delay of an outcome: exponential backoff for failures that retry.
func (r *Reconciler) after(key types.NamespacedName, o outcome) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case o.pending || o.keep:
		// A request on its way or a backoff still running says nothing new of failures.
		return o.requeue
	case !o.retry:
		delete(r.failures, key)
		delete(r.notBefore, key)
		return o.requeue
	}
	n := r.failures[key]
	r.failures[key] = n + 1
	d := r.RetryBase << min(n, 16)
	if d <= 0 || d > r.RetryMax {
		d = r.RetryMax
	}
	if r.notBefore == nil {
		r.notBefore = map[types.NamespacedName]time.Time{}
	}
	r.notBefore[key] = time.Now().Add(d)
	return d
}

// backoff is how long the port must still wait before its next switch run after a failure:
// its own status changes wake it at once, and must not hurry a failing switch.
func (r *Reconciler) backoff(key types.NamespacedName) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Until(r.notBefore[key])
}

// load finds the one Switch entry that names the port. A port's status written before
// the record existed is adopted as the entry's physical port, which is what was driven then.
func (r *Reconciler) load(ctx context.Context, port *networkv1alpha1.SwitchPort) (*machine, error) {
	m := &machine{port: port, deleting: !port.DeletionTimestamp.IsZero()}
	v, why, err := VouchingEntry(ctx, r.Client, port)
	if err != nil {
		return nil, err
	}
	if v == nil {
		m.vouch = why
		return m, nil
	}
	m.sw, m.entry = v.Switch, &v.Entry
	if st := &port.Status; st.Switch == nil && st.Configuration != nil {
		t := m.entryTarget()
		st.Switch, st.PortName = &networkv1alpha1.SwitchRef{Namespace: t.sw.Namespace, Name: t.sw.Name}, t.port
	}
	return m, nil
}

func entryNamespace(sw *networkv1alpha1.Switch, e networkv1alpha1.PortInfo) string {
	if e.Namespace != "" {
		return e.Namespace
	}
	return sw.Namespace
}

// EntryNamespace is the namespace of the SwitchPort of a Switch's port entry.
func EntryNamespace(sw *networkv1alpha1.Switch, e networkv1alpha1.PortInfo) string {
	return entryNamespace(sw, e)
}

// refOf is the linked configuration with its namespace filled in.
func refOf(port *networkv1alpha1.SwitchPort) *networkv1alpha1.ConfigurationRef {
	if port.Spec.Configuration == nil {
		return nil
	}
	ref := port.Spec.Configuration.DeepCopy()
	if ref.Namespace == "" {
		ref.Namespace = port.Namespace
	}
	return ref
}

func describe(ref *networkv1alpha1.ConfigurationRef) string {
	return fmt.Sprintf("%s/%s", ref.Namespace, ref.Name)
}
