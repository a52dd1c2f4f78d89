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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// The steps the state handlers share.

// notVouched keeps a port that no Switch entry names away from every switch.
func notVouched(m *machine, state networkv1alpha1.SwitchPortState) outcome {
	return outcome{next: state, reason: ReasonNotVouched, warn: true, message: m.vouch}
}

// claim records the physical port of the entry as the port's before the first run touches
// it, so that a run that fails half-way, or a manager that dies during it, still leaves a
// record of where to clean. Another SwitchPort that still holds the physical port is
// cleaned first.
func (r *Reconciler) claim(ctx context.Context, m *machine, next networkv1alpha1.SwitchPortState, msg string) outcome {
	t := m.entryTarget()
	if who := r.busy(ctx, m, t); who != "" {
		o := outcome{next: m.port.Status.State, reason: ReasonPortBusy, warn: true, requeue: r.RetryBase, detail: who,
			message: fmt.Sprintf("another SwitchPort still holds port %s; it is cleaned first", t.port)}
		// A clean port that the entry no longer names is let go while the new one is busy:
		// held on to, two entries that swapped ports (or a rotation of three) would each
		// wait for the other's forever. A clean port needs no holder.
		if rec, held := recordOf(m.port); held && rec != t && m.port.Status.Clean != "" {
			o.applied = &appliedConfig{}
			o.message += fmt.Sprintf("; port %s is clean and released meanwhile", rec.port)
		}
		return o
	}
	reason := ReasonCleaning
	if next == configuring {
		reason = ReasonConfiguring
	}
	return outcome{next: next, reason: reason, message: msg, applied: &appliedConfig{target: t}}
}

// busy names another SwitchPort whose record holds the physical port.
func (r *Reconciler) busy(ctx context.Context, m *machine, t target) string {
	list := &networkv1alpha1.SwitchPortList{}
	if err := r.List(ctx, list, client.MatchingFields{IndexHeldPort: t.key()}); err != nil {
		return "looking up the holders of " + t.String() + ": " + err.Error()
	}
	for i := range list.Items {
		p := &list.Items[i]
		if p.UID != m.port.UID {
			return fmt.Sprintf("SwitchPort %s/%s still holds %s", p.Namespace, p.Name, t)
		}
	}
	return ""
}

// moved handles a port whose Switch entry no longer names the physical port it holds, or
// that no entry names any more: the held physical port is cleaned before anything else.
func (r *Reconciler) moved(ctx context.Context, m *machine, state networkv1alpha1.SwitchPortState) *outcome {
	rec, held := recordOf(m.port)
	switch {
	case m.entry == nil && held && !heldClean(m.port):
		return &outcome{next: cleaning, reason: ReasonNotVouched, warn: true, then: true,
			message: m.vouch + "; cleaning the port it last drove"}
	case m.entry == nil && held:
		return &outcome{next: none, reason: ReasonNotVouched, warn: true, applied: &appliedConfig{}, message: m.vouch}
	case m.entry == nil:
		o := notVouched(m, none)
		return &o
	case !held && state == idle:
		o := r.claim(ctx, m, cleaning, "bringing the port to its clean state")
		return &o
	case !held || rec == m.entryTarget():
		return nil
	case heldClean(m.port):
		next := cleaning
		if refOf(m.port) != nil {
			next = configuring
		}
		o := r.claim(ctx, m, next, fmt.Sprintf("the Switch entry now names %s; %s is clean and left", m.entryTarget(), rec))
		return &o
	}
	return &outcome{next: cleaning, reason: ReasonMoved, event: true, then: true,
		message: fmt.Sprintf("the Switch entry now names %s; cleaning %s first", m.entryTarget(), rec)}
}

func sameClean(port *networkv1alpha1.SwitchPort, cs cleanState) bool {
	st := port.Status
	return st.Clean == cs.mode && equality.Semantic.DeepEqual(st.Configuration, cs.spec) && equality.Semantic.DeepEqual(st.ConfigurationRef, cs.ref) &&
		st.NativeVLAN == cs.native
}

// request returns the result of the port's request once a run has ended it. Until then it
// hands the request to the switch's queue (once) and returns done false: the port is woken
// when the run ends, and no reconcile waits for a switch.
func (r *Reconciler) request(ctx context.Context, m *machine, sw *networkv1alpha1.Switch, state networkv1alpha1.SwitchPortState, o op) (result, bool, *outcome) {
	key := requester("port", client.ObjectKeyFromObject(m.port))
	m.driven = sw
	if res, done, pending := r.Batcher.Take(key, o); done || pending {
		if done && res.err != nil {
			m.provider = r.providerOf(ctx, sw)
		}
		return res, done, nil
	}
	if wait := r.backoff(client.ObjectKeyFromObject(m.port)); wait > 0 {
		return result{}, false, &outcome{next: state, keep: true, requeue: wait}
	}
	if r.Batcher.Join(key, client.ObjectKeyFromObject(sw), r.sourceOf(ctx, sw), o) {
		return result{}, false, nil
	}
	d, out := r.driverFor(ctx, m, sw, state)
	if out != nil {
		return result{}, false, out
	}
	r.Batcher.Submit(key, client.ObjectKeyFromObject(sw), d, providerVersion(m.provider), o)
	return result{}, false, nil
}

// sourceOf names the provider a driver of the Switch would be built from now ("" if none).
func (r *Reconciler) sourceOf(ctx context.Context, sw *networkv1alpha1.Switch) string {
	if sw.Spec.Provider.Kind != "AnsibleSwitch" {
		return ""
	}
	return providerVersion(r.providerOf(ctx, sw))
}

// providerVersion names one version of an AnsibleSwitch: a driver built from another (a new host, a
// new Secret name) is not the one to use.
func providerVersion(a *networkv1alpha1.AnsibleSwitch) string {
	if a == nil {
		return ""
	}
	return string(a.UID) + "/" + a.ResourceVersion
}

// providerOf is the Switch's AnsibleSwitch, where a run's full error is reported too.
func (r *Reconciler) providerOf(ctx context.Context, sw *networkv1alpha1.Switch) *networkv1alpha1.AnsibleSwitch {
	a := &networkv1alpha1.AnsibleSwitch{}
	if r.Get(ctx, client.ObjectKey{Namespace: sw.Namespace, Name: sw.Spec.Provider.Name}, a) != nil {
		return nil
	}
	return a
}

// waiting is the outcome of a port whose request is on its way to the switch. The run's end
// wakes it; the requeue is a safety net should that wake be lost.
func (r *Reconciler) waiting(state networkv1alpha1.SwitchPortState, reason, msg string) outcome {
	return outcome{next: state, reason: reason, message: msg, requeue: r.DriftInterval, pending: true}
}

// readStatus says what readBack did.
type readStatus int

const (
	readSkipped readStatus = iota // not due, or the switch's OS has no read-back
	readPending                   // on its way to the switch
	readDone
)

// readBack reads a physical port from its switch, at most once per drift interval unless
// forced. Without a read-back on the switch's OS, the successful run is all there is to go by.
func (r *Reconciler) readBack(ctx context.Context, m *machine, t target, state networkv1alpha1.SwitchPortState, force bool) (*networkv1alpha1.SwitchPortConfigurationSpec, readStatus, *outcome) {
	sw := m.sw
	if sw == nil || client.ObjectKeyFromObject(sw) != t.sw {
		sw = &networkv1alpha1.Switch{}
		if err := r.Get(ctx, t.sw, sw); err != nil {
			return nil, readSkipped, &outcome{next: state, reason: ReasonSwitchNotFound, warn: true, retry: true, message: fmt.Sprintf("Switch %s: %v", t.sw, err)}
		}
	}
	key := requester("port", client.ObjectKeyFromObject(m.port))
	o := readOp(t.port)
	res, done, pending := r.Batcher.Take(key, o)
	switch {
	case pending:
		return nil, readPending, nil
	case done && errors.Is(res.err, switchdriver.ErrUnsupported):
		return nil, readSkipped, nil
	case done && res.err != nil:
		r.forgetRead(t)
		m.driven, m.provider = sw, r.providerOf(ctx, sw)
		out := driverFailure(m, state, ReasonReadFailed, fmt.Sprintf("reading port %s back failed", t.port), res.err)
		return nil, readSkipped, &out
	case done:
		return res.read, readDone, nil
	}
	if force {
		r.forgetRead(t)
	}
	if !r.readDue(t) {
		return nil, readSkipped, nil
	}
	if _, _, out := r.request(ctx, m, sw, state, o); out != nil {
		r.forgetRead(t)
		return nil, readSkipped, out
	}
	return nil, readPending, nil
}

// driverFailure reports a failed switch run: the reason and what the tenant can act on on
// the SwitchPort, the switch's own message (address, login) for the infra team.
func driverFailure(m *machine, state networkv1alpha1.SwitchPortState, fallback, what string, err error) outcome {
	where := "its Switch"
	if m.driven != nil {
		where = "Switch " + m.driven.Namespace + "/" + m.driven.Name
	}
	return outcome{next: state, reason: FailureReason(err, fallback), warn: true, retry: true, detail: err.Error(),
		message: fmt.Sprintf("%s: %s; retrying; the infra team sees the switch's message in the Events of %s", what, TenantText(err), where)}
}

// TenantText says what went wrong without the switch's management address or login.
func TenantText(err error) string {
	var te interface{ TenantText() string }
	switch {
	case errors.Is(err, switchdriver.ErrAuthentication):
		return "the switch refused the operator's credentials"
	case errors.Is(err, switchdriver.ErrUnreachable):
		return "the switch could not be reached"
	case errors.Is(err, switchdriver.ErrTimeout):
		return "the switch run did not finish within its limit and was stopped"
	case errors.Is(err, switchdriver.ErrUnsupported), errors.Is(err, switchdriver.ErrRefused),
		errors.Is(err, errSuperseded), errors.Is(err, errNoAnswer):
		return err.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "the switch did not answer in time"
	case errors.As(err, &te):
		return te.TenantText()
	}
	return "the switch run failed"
}

// verify returns the linked configuration if it may go on the port, or why not.
func (r *Reconciler) verify(ctx context.Context, m *machine, ref *networkv1alpha1.ConfigurationRef) (*networkv1alpha1.SwitchPortConfigurationSpec, *outcome) {
	stay := func(reason, msg string) *outcome {
		return &outcome{next: configuring, reason: reason, message: msg, warn: true}
	}
	if ref.Namespace != m.port.Namespace && !MayLinkAcross(m.port, m.sw) {
		return nil, stay(ReasonInvalidConfiguration, fmt.Sprintf("configuration %s is in another namespace; a tenant's port only takes configurations of its own namespace", describe(ref)))
	}
	c := &networkv1alpha1.SwitchPortConfiguration{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, c); err != nil {
		return nil, stay(ReasonConfigurationNotFound, fmt.Sprintf("configuration %s: %v", describe(ref), err))
	}
	errs, reason, err := r.fits(ctx, ref.Namespace, m.entry, &c.Spec)
	switch {
	case err != nil:
		return nil, stay(reason, err.Error())
	case len(errs) > 0:
		return nil, stay(reason, fmt.Sprintf("configuration %s does not fit: %v", describe(ref), errs.ToAggregate()))
	}
	return &c.Spec, nil
}

// fits checks a configuration against the port's entry and the namespace's limit.
func (r *Reconciler) fits(ctx context.Context, namespace string, entry *networkv1alpha1.PortInfo, spec *networkv1alpha1.SwitchPortConfigurationSpec) (field.ErrorList, string, error) {
	path := field.NewPath("spec")
	if !HasVLANs(spec) {
		return field.ErrorList{field.Required(path.Child("untaggedVLAN"),
			"set untaggedVLAN or vlans (or both): a port with neither would stay on the switch's default, which on Open vSwitch trunks every VLAN")}, ReasonInvalidConfiguration, nil
	}
	limit := &networkv1alpha1.SwitchResourceLimit{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: networkv1alpha1.SwitchResourceLimitName}, limit); err != nil {
		if apierrors.IsNotFound(err) {
			return field.ErrorList{field.Forbidden(path, "namespace "+namespace+" has no SwitchResourceLimit "+networkv1alpha1.SwitchResourceLimitName)}, ReasonLimitNotFound, nil
		}
		return nil, ReasonLimitNotFound, fmt.Errorf("SwitchResourceLimit %s/%s: %w", namespace, networkv1alpha1.SwitchResourceLimitName, err)
	}
	errs := FitsPort(path, spec, entry)
	errs = append(errs, FitsLimit(path, spec, limit)...)
	return errs, ReasonInvalidConfiguration, nil
}

// heldFits checks the configuration the physical port holds against the namespace's limit
// and the port's entry as they are now.
func (r *Reconciler) heldFits(ctx context.Context, m *machine) field.ErrorList {
	if !holdsTenant(m.port) {
		return nil
	}
	return r.heldFitsSpec(ctx, m.port, TenantOf(m.port, m.port.Status.ConfigurationRef), m.port.Status.Configuration)
}

// heldFitsSpec looks the entry and the limit up afresh: a run may have taken long enough
// for either to tighten.
func (r *Reconciler) heldFitsSpec(ctx context.Context, port *networkv1alpha1.SwitchPort, tenant string, spec *networkv1alpha1.SwitchPortConfigurationSpec) field.ErrorList {
	fresh, err := r.load(ctx, port.DeepCopy())
	if err != nil {
		return nil // the next reconcile checks again
	}
	if fresh.entry == nil {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"), fresh.vouch)}
	}
	errs, _, err := r.fits(ctx, tenant, fresh.entry, spec)
	if err != nil {
		return nil
	}
	return errs
}

// outsideLimit takes a port whose configuration no longer fits back to its clean state.
func outsideLimit(m *machine, errs field.ErrorList) outcome {
	what := "the configuration"
	if ref := m.port.Status.ConfigurationRef; ref != nil {
		what = "configuration " + describe(ref)
	}
	return outcome{next: cleaning, reason: ReasonOutsideLimit, warn: true, then: true,
		message: fmt.Sprintf("%s no longer fits the namespace's limit or the port's Switch entry (%v); cleaning the port", what, errs.ToAggregate())}
}
