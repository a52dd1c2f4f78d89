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

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

type stateHandler func(context.Context, *Reconciler, *machine) outcome

// handlers is the state machine: one handler per state, each returning the next state.
var handlers map[networkv1alpha1.SwitchPortState]stateHandler

func init() {
	handlers = map[networkv1alpha1.SwitchPortState]stateHandler{
		networkv1alpha1.StateNone:        handleNone,
		networkv1alpha1.StateIdle:        handleIdle,
		networkv1alpha1.StateConfiguring: handleConfiguring,
		networkv1alpha1.StateActive:      handleActive,
		networkv1alpha1.StateCleaning:    handleCleaning,
		networkv1alpha1.StateDeleting:    handleDeleting,
	}
}

const (
	none        = networkv1alpha1.StateNone
	idle        = networkv1alpha1.StateIdle
	configuring = networkv1alpha1.StateConfiguring
	active      = networkv1alpha1.StateActive
	cleaning    = networkv1alpha1.StateCleaning
	deleting    = networkv1alpha1.StateDeleting
)

// handleNone takes a port the operator has not driven yet to its clean state: Idle means
// clean, verified on the switch, never the device's default.
func handleNone(ctx context.Context, r *Reconciler, m *machine) outcome {
	if m.entry == nil {
		return notVouched(m, none)
	}
	return r.claim(ctx, m, cleaning, "port is managed; bringing it to its clean state")
}

func handleIdle(ctx context.Context, r *Reconciler, m *machine) outcome {
	if o := r.moved(ctx, m, idle); o != nil {
		return *o
	}
	if ref := refOf(m.port); ref != nil {
		return outcome{next: configuring, reason: ReasonConfiguring, message: "configuration " + describe(ref) + " linked", then: true, asked: true}
	}
	t, _ := recordOf(m.port)
	cs, err := cleanStateOf(ctx, r.Client, m.sw, t.port)
	if err != nil {
		return outcome{next: idle, reason: ReasonNoCleanState, message: err.Error(), warn: true, requeue: r.DriftInterval}
	}
	if !sameClean(m.port, cs) {
		return outcome{next: cleaning, reason: ReasonCleaning, event: true, then: true,
			message: fmt.Sprintf("the clean state of port %s changed on its Switch; cleaning it again", t.port)}
	}
	got, read, o := r.readBack(ctx, m, t, idle, false)
	if o != nil {
		return *o
	}
	if read == readDone && !equality.Semantic.DeepEqual(got, cs.spec) {
		// The record no longer claims a clean port, so Cleaning applies it again.
		return outcome{next: cleaning, reason: ReasonDrift, warn: true, then: true, applied: &appliedConfig{target: t},
			message: fmt.Sprintf("port %s differs on the switch from its clean state; cleaning it again", t.port)}
	}
	return outcome{next: idle, reason: ReasonIdle, message: idleMessage(t.port, cs.mode), requeue: r.nextRound(t.sw)}
}

func handleConfiguring(ctx context.Context, r *Reconciler, m *machine) outcome {
	ref := refOf(m.port)
	if ref == nil {
		return unlinked(m)
	}
	if o := r.moved(ctx, m, configuring); o != nil {
		return *o
	}
	if _, ok := recordOf(m.port); !ok {
		return r.claim(ctx, m, configuring, "configuration "+describe(ref)+" linked")
	}
	t := m.entryTarget()
	cfg, bad := r.verify(ctx, m, ref)
	if bad != nil {
		if errs := r.heldFits(ctx, m); errs != nil {
			return outsideLimit(m, errs)
		}
		if heldUnknown(m.port) {
			// A run may have put part of an earlier change on the port: clean it.
			o := *bad
			o.next, o.then = cleaning, true
			return o
		}
		return *bad
	}
	if who := r.busy(ctx, m, t); who != "" {
		return outcome{next: configuring, reason: ReasonPortBusy, warn: true, requeue: r.RetryBase,
			message: fmt.Sprintf("another SwitchPort still holds port %s; it is cleaned first", t.port), detail: who}
	}
	res, done, o := r.request(ctx, m, m.sw, configuring, applyOp(switchdriver.Change{Port: t.port, Config: cfg, Parking: parkingOf(m.sw, t.port)}))
	switch {
	case o != nil:
		return *o
	case !done:
		// Until the run reports, the port may hold any part of the change: the record says
		// so, and a port that must give it up meanwhile is cleaned.
		o := r.waiting(configuring, ReasonConfiguring, fmt.Sprintf("applying %s to port %s: the change is on its way to the switch", describe(ref), t.port))
		o.applied = &appliedConfig{target: t}
		return o
	}
	if err := res.err; errors.Is(err, switchdriver.ErrNotSaved) {
		// The switch runs the change: the port holds it, and says that a reboot would lose
		// it; Active retries the save (with backoff) until it lands.
		return outcome{next: active, reason: ReasonNotSaved, warn: true, retry: true, detail: err.Error(),
			applied: &appliedConfig{target: t, ref: ref, spec: cfg, native: nativeOf(cfg, parkingOf(m.sw, t.port))},
			message: fmt.Sprintf("port %s runs configuration %s, but the switch did not save it (a reboot would lose it); the save is retried", t.port, describe(ref))}
	}
	if err := res.err; err != nil {
		o := driverFailure(m, configuring, ReasonApplyFailed, fmt.Sprintf("applying %s to port %s failed", describe(ref), t.port), err)
		// The run may have changed part of the port: only a clean makes it known again.
		o.applied = &appliedConfig{target: t}
		return o
	}
	// The run reported the port done; drift reads check it every interval, one read of
	// the whole switch for all its ports.
	applied := &appliedConfig{target: t, ref: ref, spec: cfg, native: nativeOf(cfg, parkingOf(m.sw, t.port))}
	// The limit or the port's entry may have tightened while the run was on the switch.
	if errs := r.heldFitsSpec(ctx, m.port, ref.Namespace, cfg); errs != nil {
		o := outsideLimit(m, errs)
		o.applied = applied
		return o
	}
	return outcome{
		next: active, reason: ReasonActive, event: true,
		message: fmt.Sprintf("port %s holds configuration %s", t.port, describe(ref)),
		applied: applied,
	}
}

func handleActive(ctx context.Context, r *Reconciler, m *machine) outcome {
	ref := refOf(m.port)
	if ref == nil {
		return unlinked(m)
	}
	if o := r.moved(ctx, m, active); o != nil {
		return *o
	}
	reconfigure := func(msg string) outcome {
		return outcome{next: configuring, reason: ReasonConfiguring, message: msg, then: true, asked: true}
	}
	if applied := m.port.Status.ConfigurationRef; applied == nil || *applied != *ref {
		return reconfigure("linked configuration changed to " + describe(ref) + "; reconfiguring in place")
	}
	if errs := r.heldFits(ctx, m); errs != nil {
		return outsideLimit(m, errs)
	}
	c := &networkv1alpha1.SwitchPortConfiguration{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, c); err != nil {
		return outcome{next: active, reason: ReasonConfigurationNotFound, warn: true,
			message: fmt.Sprintf("the switch keeps the last applied configuration, but %s: %v", describe(ref), client.IgnoreNotFound(err))}
	}
	if !equality.Semantic.DeepEqual(&c.Spec, m.port.Status.Configuration) {
		return reconfigure("configuration " + describe(ref) + " differs from what the port holds; reconfiguring in place")
	}
	t := m.entryTarget()
	// A trunk without an untagged VLAN took the parking VLAN as native VLAN; moved, the old
	// one may go to a tenant's limit.
	if n := nativeOf(m.port.Status.Configuration, parkingOf(m.sw, t.port)); n != m.port.Status.NativeVLAN {
		return reconfigure(fmt.Sprintf("the parking VLAN of port %s, native VLAN of its trunk, is %d now; reconfiguring in place", t.port, n))
	}
	if failed := meta.FindStatusCondition(m.port.Status.Conditions, ConditionFailed); failed != nil && failed.Reason == ReasonNotSaved {
		return r.resave(ctx, m, t, ref, &c.Spec)
	}
	got, read, o := r.readBack(ctx, m, t, active, false)
	if o != nil {
		return *o
	}
	if read == readDone && !equality.Semantic.DeepEqual(got, m.port.Status.Configuration) {
		return outcome{next: configuring, reason: ReasonDrift, warn: true, then: true,
			message: fmt.Sprintf("port %s differs on the switch from configuration %s; reapplying", t.port, describe(ref))}
	}
	return outcome{next: active, reason: ReasonActive, requeue: r.nextRound(t.sw),
		message: fmt.Sprintf("port %s holds configuration %s", t.port, describe(ref))}
}

// resave applies an Active port's configuration again, for the save that failed: the port
// stays Active meanwhile, since the switch runs it.
func (r *Reconciler) resave(ctx context.Context, m *machine, t target, ref *networkv1alpha1.ConfigurationRef, cfg *networkv1alpha1.SwitchPortConfigurationSpec) outcome {
	msg := fmt.Sprintf("port %s runs configuration %s, but the switch did not save it (a reboot would lose it); the save is retried", t.port, describe(ref))
	res, done, o := r.request(ctx, m, m.sw, active, applyOp(switchdriver.Change{Port: t.port, Config: cfg, Parking: parkingOf(m.sw, t.port)}))
	switch {
	case o != nil:
		return *o
	case !done:
		o := r.waiting(active, ReasonNotSaved, msg)
		o.warn = true
		return o
	case res.err == nil:
		return outcome{next: active, reason: ReasonActive, event: true, message: fmt.Sprintf("port %s holds configuration %s, saved", t.port, describe(ref))}
	case errors.Is(res.err, switchdriver.ErrNotSaved):
		return outcome{next: active, reason: ReasonNotSaved, warn: true, retry: true, detail: res.err.Error(), message: msg}
	}
	// The run may have changed part of the port: only a clean makes it known again.
	o2 := driverFailure(m, configuring, ReasonApplyFailed, fmt.Sprintf("saving %s on port %s failed", describe(ref), t.port), res.err)
	o2.applied = &appliedConfig{target: t}
	return o2
}

// unlinked is where a port goes when its configuration link is removed.
func unlinked(m *machine) outcome {
	if _, ok := recordOf(m.port); ok && m.port.Status.Clean == "" {
		return outcome{next: cleaning, reason: ReasonCleaning, message: "configuration unlinked; cleaning the port", then: true}
	}
	return outcome{next: idle, reason: ReasonIdle, message: "no configuration linked", then: true}
}

// handleCleaning brings the physical port of the record, where the operator last drove the
// SwitchPort, to its clean state and checks it there.
func handleCleaning(ctx context.Context, r *Reconciler, m *machine) outcome {
	t, ok := recordOf(m.port)
	if !ok {
		switch {
		case m.deleting:
			return outcome{next: deleting, reason: ReasonDeleting, message: "nothing of the port's is on a switch; deleting", then: true}
		case m.entry == nil:
			return notVouched(m, none)
		}
		return r.claim(ctx, m, cleaning, "bringing the port to its clean state")
	}
	sw := &networkv1alpha1.Switch{}
	if err := r.Get(ctx, t.sw, sw); err != nil {
		if m.deleting && client.IgnoreNotFound(err) == nil {
			return outcome{next: deleting, reason: ReasonReleased, warn: true, then: true, applied: &appliedConfig{},
				message: fmt.Sprintf("Switch %s is gone; port %s is left as it is", t.sw, t.port)}
		}
		return outcome{next: cleaning, reason: ReasonSwitchNotFound, warn: true, retry: true,
			message: fmt.Sprintf("Switch %s of port %s: %v", t.sw, t.port, err)}
	}
	if m.deleting && sw.Annotations[networkv1alpha1.AnnotationReleaseWithoutCleaning] == "true" {
		return outcome{next: deleting, reason: ReasonReleased, warn: true, then: true, applied: &appliedConfig{},
			message: fmt.Sprintf("released without cleaning (annotation %s on Switch %s): port %s keeps what it held",
				networkv1alpha1.AnnotationReleaseWithoutCleaning, t.sw.Name, t.port)}
	}
	cs, err := cleanStateOf(ctx, r.Client, sw, t.port)
	if err != nil {
		return outcome{next: cleaning, reason: ReasonNoCleanState, message: err.Error(), warn: true, retry: true}
	}
	clean := &appliedConfig{target: t, clean: cs.mode, ref: cs.ref, spec: cs.spec, native: cs.native}
	if !sameClean(m.port, cs) {
		res, done, o := r.request(ctx, m, sw, cleaning, applyOp(switchdriver.Change{Port: t.port, Config: cs.spec, Parking: parkingOf(sw, t.port)}))
		switch {
		case o != nil:
			return *o
		case !done:
			return r.waiting(cleaning, ReasonCleaning, fmt.Sprintf("cleaning port %s: the change is on its way to the switch", t.port))
		case errors.Is(res.err, switchdriver.ErrNotSaved):
			// As for a configure: the port runs its clean state, but a reboot would load what
			// it held before, so it is not recorded clean; the clean is applied again, with
			// backoff, until the save lands, and only then does the port leave Cleaning.
			return outcome{next: cleaning, reason: ReasonNotSaved, warn: true, retry: true, detail: res.err.Error(),
				message: fmt.Sprintf("port %s runs its clean state (%s), but the switch did not save it (a reboot would load what it held before); the clean is retried", t.port, cs.mode)}
		case res.err != nil:
			return driverFailure(m, cleaning, ReasonCleanFailed, fmt.Sprintf("cleaning port %s failed", t.port), res.err)
		}
		// Recorded clean now; the next reconcile reads it back.
		r.forgetRead(t)
		return outcome{next: cleaning, reason: ReasonCleaning, applied: clean,
			message: fmt.Sprintf("port %s cleaned (%s); reading it back", t.port, cs.mode)}
	}
	got, read, o := r.readBack(ctx, m, t, cleaning, false)
	switch {
	case o != nil:
		return *o
	case read == readPending:
		return r.waiting(cleaning, ReasonCleaning, fmt.Sprintf("port %s cleaned (%s); reading it back", t.port, cs.mode))
	case read == readDone && !equality.Semantic.DeepEqual(got, cs.spec):
		// Applied again on the next reconcile: the record no longer claims a clean port.
		return outcome{next: cleaning, reason: ReasonCleanNotVerified, warn: true, retry: true, applied: &appliedConfig{target: t},
			message: fmt.Sprintf("port %s was cleaned but reads back differently from its clean state", t.port)}
	}
	msg := fmt.Sprintf("port %s cleaned (%s)", t.port, cs.mode)
	switch {
	case m.deleting:
		return outcome{next: deleting, reason: ReasonDeleting, message: msg + "; deleting", applied: clean, then: true}
	case m.entry == nil:
		// Clean, and no longer this SwitchPort's: forget the port so its new owner may take it.
		return outcome{next: none, reason: ReasonNotVouched, warn: true, applied: &appliedConfig{}, message: msg + "; " + m.vouch}
	case m.entryTarget() != t:
		o := r.claim(ctx, m, cleaning, msg+"; moving to the port its Switch entry names now")
		if refOf(m.port) != nil && o.applied != nil {
			o.next = configuring
		}
		return o
	case refOf(m.port) != nil:
		return outcome{next: configuring, reason: ReasonConfiguring, message: msg + "; a configuration is linked", applied: clean, then: true}
	default:
		return outcome{next: idle, reason: ReasonIdle, message: idleMessage(t.port, cs.mode), applied: clean, event: true}
	}
}

// idleMessage is the one message of a clean Idle port: the reconcile that follows its own
// status write (and each drift read) then finds nothing to write.
func idleMessage(port string, mode networkv1alpha1.CleanMode) string {
	return fmt.Sprintf("port %s is clean (%s)", port, mode)
}

func handleDeleting(ctx context.Context, r *Reconciler, m *machine) outcome {
	if !m.deleting {
		return outcome{next: none, reason: ReasonIdle, message: "not being deleted", then: true}
	}
	base := m.port.DeepCopy()
	controllerutil.RemoveFinalizer(m.port, Finalizer)
	if err := r.Patch(ctx, m.port, client.MergeFrom(base)); err != nil && client.IgnoreNotFound(err) != nil {
		return outcome{next: deleting, reason: ReasonDeleting, warn: true, retry: true, message: "removing the finalizer: " + err.Error()}
	}
	return outcome{next: deleting, gone: true}
}
