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

// Package switches holds the Switch reconciler: it checks the switch's provider and keeps
// one SwitchPort per entry of spec.ports.
package switches

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// +kubebuilder:rbac:groups=metal3.io,resources=switches,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=switches/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=switches/finalizers,verbs=update
// +kubebuilder:rbac:groups=metal3.io,resources=switchports,verbs=get;list;watch;create;update;patch;delete

// Finalizer holds a Switch until every SwitchPort it made is cleaned and gone.
const Finalizer = "metal3.io/switch"

// ConditionPortsCreated is true when every entry of the Switch has its SwitchPort. An entry
// that cannot have one (its namespace is missing or terminating, or a SwitchPort of that
// name is not the Switch's) is named here and does not hold up the other entries.
const ConditionPortsCreated = "PortsCreated"

// Reasons of the Switch's conditions besides those of switchport.
const (
	ReasonReady                = "Ready"
	ReasonProviderCheckFail    = "ProviderCheckFailed"
	ReasonPortConflict         = "PortConflict"
	ReasonNamespaceUnavailable = "NamespaceUnavailable"
	ReasonCreated              = "Created"
	ReasonDeleting             = "Deleting"
)

// Reconciler reconciles a Switch.
type Reconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	Drivers  switchdriver.Factory
	Batcher  *switchport.Batcher
	// Secrets reads credentials without a cache: the manager may not list or watch Secrets.
	Secrets client.Reader
}

// Reconcile checks the provider and creates and retires the Switch's SwitchPorts.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sw := &networkv1alpha1.Switch{}
	if err := r.Get(ctx, req.NamespacedName, sw); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if sw.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(sw, Finalizer) {
		base := sw.DeepCopy()
		controllerutil.AddFinalizer(sw, Finalizer)
		return ctrl.Result{}, r.Patch(ctx, sw, client.MergeFrom(base))
	}
	base := sw.DeepCopy()
	ports, err := r.portsOf(ctx, sw)
	if err != nil {
		return ctrl.Result{}, err
	}

	var cond metav1.Condition
	created := metav1.Condition{Type: ConditionPortsCreated, Status: metav1.ConditionTrue, Reason: ReasonCreated,
		Message: fmt.Sprintf("every one of the %d entries has its SwitchPort", len(sw.Spec.Ports))}
	var requeue time.Duration
	if !sw.DeletionTimestamp.IsZero() {
		// The Switch's own ports are deleted, and so cleaned; a port of another Switch's
		// entry that still records one of this Switch's physical ports cleans it on its own,
		// and the Switch waits for it.
		owned := func(p *networkv1alpha1.SwitchPort) bool {
			ref, ok := switchport.SwitchOf(p)
			return ok && ref == client.ObjectKeyFromObject(sw)
		}
		left, err := r.retire(ctx, sw, ports, owned)
		if err != nil {
			return ctrl.Result{}, err
		}
		for i := range ports {
			if !owned(&ports[i]) {
				left++
			}
		}
		if left == 0 {
			controllerutil.RemoveFinalizer(sw, Finalizer)
			return ctrl.Result{}, client.IgnoreNotFound(r.Patch(ctx, sw, client.MergeFrom(base)))
		}
		cond = notReady(ReasonDeleting, fmt.Sprintf("waiting for %d SwitchPorts to be cleaned and deleted", left))
		requeue = 30 * time.Second
	} else {
		missing, err := r.ensurePorts(ctx, sw)
		if err != nil {
			return ctrl.Result{}, err
		}
		if _, err := r.retire(ctx, sw, ports, func(p *networkv1alpha1.SwitchPort) bool { return !wanted(sw, p) }); err != nil {
			return ctrl.Result{}, err
		}
		cond, requeue = r.check(ctx, sw)
		if len(missing.conflicts) > 0 {
			created = metav1.Condition{Type: ConditionPortsCreated, Status: metav1.ConditionFalse, Reason: ReasonPortConflict,
				Message: "SwitchPorts exist that belong to something else: " + strings.Join(missing.conflicts, ", ")}
		}
		if len(missing.namespaces) > 0 {
			created = metav1.Condition{Type: ConditionPortsCreated, Status: metav1.ConditionFalse, Reason: ReasonNamespaceUnavailable,
				Message: "entries whose namespace is missing or terminating, left until it exists: " + strings.Join(missing.namespaces, "; ")}
			requeue = min(nonZero(requeue), time.Minute)
		}
	}

	cond.ObservedGeneration = sw.Generation
	created.ObservedGeneration = sw.Generation
	sw.Status.ObservedGeneration = sw.Generation
	meta.SetStatusCondition(&sw.Status.Conditions, cond)
	meta.SetStatusCondition(&sw.Status.Conditions, created)
	if !equality.Semantic.DeepEqual(base.Status, sw.Status) {
		r.Recorder.Eventf(sw, nil, eventType(cond), cond.Reason, "Reconcile", "%s", cond.Message)
		if err := r.Status().Patch(ctx, sw, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

func nonZero(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Hour
	}
	return d
}

func notReady(reason, msg string) metav1.Condition {
	return metav1.Condition{Type: networkv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}

func eventType(c metav1.Condition) string {
	if c.Status == metav1.ConditionTrue {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

// check resolves the provider and credentials and asks the switch whether it answers. The
// full text goes on the Switch and on the AnsibleSwitch: both are the infra team's.
func (r *Reconciler) check(ctx context.Context, sw *networkv1alpha1.Switch) (metav1.Condition, time.Duration) {
	cond, requeue, provider := r.probe(ctx, sw)
	if provider != nil {
		base := provider.DeepCopy()
		pc := cond
		pc.ObservedGeneration = provider.Generation
		provider.Status.ObservedGeneration = provider.Generation
		meta.SetStatusCondition(&provider.Status.Conditions, pc)
		if !equality.Semantic.DeepEqual(base.Status, provider.Status) {
			if err := r.Status().Patch(ctx, provider, client.MergeFrom(base)); client.IgnoreNotFound(err) != nil {
				return notReady(ReasonProviderCheckFail, "recording the check on the AnsibleSwitch: "+err.Error()), 15 * time.Second
			}
		}
	}
	return cond, requeue
}

// ReasonCircuitOpen says the switch failed several runs in a row and is left alone for a while.
const ReasonCircuitOpen = "CircuitOpen"

// probe checks the switch through its queue: the check is handed over, and the Switch is
// woken when the run that carries it ends, so a hung switch holds no worker. While the
// check is on its way the condition stays as it was.
func (r *Reconciler) probe(ctx context.Context, sw *networkv1alpha1.Switch) (metav1.Condition, time.Duration, *networkv1alpha1.AnsibleSwitch) {
	key := client.ObjectKeyFromObject(sw)
	if failed, until := r.Batcher.Breaker(key); time.Now().Before(until) {
		return notReady(ReasonCircuitOpen, fmt.Sprintf("%d runs in a row failed (see the Events); the next run on the switch starts at %s",
			failed, until.UTC().Format(time.RFC3339))), time.Until(until) + time.Second, nil
	}
	done, pending, err := r.Batcher.TakeCheck(key)
	switch {
	case pending:
		return r.current(sw), 0, nil
	case done && err != nil:
		return notReady(switchport.FailureReason(err, ReasonProviderCheckFail), "checking the switch failed: "+err.Error()), time.Minute, r.provider(ctx, sw)
	case done:
		return metav1.Condition{Type: networkv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonReady,
			Message: fmt.Sprintf("provider answered; %d ports", len(sw.Spec.Ports))}, 0, r.provider(ctx, sw)
	}
	d, provider, reason, err := switchport.Resolve(ctx, r.Client, r.Secrets, sw, r.Drivers)
	switch {
	case reason == switchport.ReasonCredentialsNotFound || reason == switchport.ReasonCredentialsNotGranted:
		// The manager may not watch Secrets: look again, so a Secret created or fixed
		// later is picked up.
		return notReady(reason, err.Error()), 15 * time.Second, provider
	case err != nil:
		// A missing AnsibleSwitch comes back through its watch; an unavailable driver
		// does not come back at all.
		return notReady(reason, err.Error()), 0, provider
	}
	// Every run reads the Secret afresh, so a rotated password is tried by the next check.
	r.Batcher.SubmitCheck(key, d)
	return r.current(sw), 0, nil
}

// current is the Switch's Ready condition as it stands, Unknown before the first check.
func (r *Reconciler) current(sw *networkv1alpha1.Switch) metav1.Condition {
	if c := meta.FindStatusCondition(sw.Status.Conditions, networkv1alpha1.ConditionReady); c != nil && c.Reason != ReasonDeleting {
		return *c
	}
	return metav1.Condition{Type: networkv1alpha1.ConditionReady, Status: metav1.ConditionUnknown, Reason: "Checking", Message: "the switch is being checked"}
}

func (r *Reconciler) provider(ctx context.Context, sw *networkv1alpha1.Switch) *networkv1alpha1.AnsibleSwitch {
	a := &networkv1alpha1.AnsibleSwitch{}
	if r.Get(ctx, client.ObjectKey{Namespace: sw.Namespace, Name: sw.Spec.Provider.Name}, a) != nil {
		return nil
	}
	return a
}

// portsOf lists the SwitchPorts the Switch made, in any namespace, and those whose status
// records a physical port of it: the Switch waits for both before it goes.
func (r *Reconciler) portsOf(ctx context.Context, sw *networkv1alpha1.Switch) ([]networkv1alpha1.SwitchPort, error) {
	list := &networkv1alpha1.SwitchPortList{}
	if err := r.List(ctx, list, client.MatchingLabels{switchport.LabelSwitchName: sw.Name, switchport.LabelSwitchNamespace: sw.Namespace}); err != nil {
		return nil, err
	}
	recorded := &networkv1alpha1.SwitchPortList{}
	if err := r.List(ctx, recorded, client.MatchingFields{switchport.IndexRecordedSwitch: sw.Namespace + "/" + sw.Name}); err != nil {
		return nil, err
	}
	seen := map[types.UID]bool{}
	var out []networkv1alpha1.SwitchPort
	for _, p := range append(list.Items, recorded.Items...) {
		if !seen[p.UID] {
			seen[p.UID] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// wanted reports whether an entry of the Switch names the port. A port that only records a
// physical port of the Switch (its entry moved to another Switch) is not the Switch's to
// retire: its own reconcile cleans that physical port.
func wanted(sw *networkv1alpha1.Switch, p *networkv1alpha1.SwitchPort) bool {
	if ref, ok := switchport.SwitchOf(p); !ok || ref != client.ObjectKeyFromObject(sw) {
		return true
	}
	e, ok := sw.Spec.Ports[p.Name]
	return ok && switchport.EntryNamespace(sw, e) == p.Namespace
}

// retire deletes the selected ports. Their own finalizer takes them through Cleaning, so a
// configured port is cleaned on the switch before it goes. It returns how many are left.
func (r *Reconciler) retire(ctx context.Context, sw *networkv1alpha1.Switch, ports []networkv1alpha1.SwitchPort, sel func(*networkv1alpha1.SwitchPort) bool) (int, error) {
	left := 0
	for i := range ports {
		p := &ports[i]
		if !sel(p) {
			continue
		}
		left++
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return left, err
		}
		r.Recorder.Eventf(sw, p, corev1.EventTypeNormal, "RetiringPort", "Delete", "SwitchPort %s/%s is cleaned and deleted", p.Namespace, p.Name)
	}
	return left, nil
}

// unplaced lists the entries that have no SwitchPort of the Switch's.
type unplaced struct {
	conflicts  []string
	namespaces []string
}

// ensurePorts creates the missing SwitchPorts. An entry that cannot have one is reported and
// skipped, so the Switch goes on managing its other ports.
func (r *Reconciler) ensurePorts(ctx context.Context, sw *networkv1alpha1.Switch) (unplaced, error) {
	names := make([]string, 0, len(sw.Spec.Ports))
	for n := range sw.Spec.Ports {
		names = append(names, n)
	}
	sort.Strings(names)
	var out unplaced
	for _, name := range names {
		e := sw.Spec.Ports[name]
		ns := switchport.EntryNamespace(sw, e)
		p := &networkv1alpha1.SwitchPort{}
		err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)
		switch {
		case apierrors.IsNotFound(err):
			err := r.create(ctx, sw, ns, name)
			switch {
			case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
				// A missing namespace answers NotFound, a terminating one Forbidden.
				out.namespaces = append(out.namespaces, fmt.Sprintf("%s (namespace %s: %v)", name, ns, err))
			case err != nil:
				return out, err
			}
		case err != nil:
			return out, err
		default:
			if ref, ok := switchport.SwitchOf(p); !ok || ref != client.ObjectKeyFromObject(sw) {
				out.conflicts = append(out.conflicts, ns+"/"+name)
			}
		}
	}
	return out, nil
}

func (r *Reconciler) create(ctx context.Context, sw *networkv1alpha1.Switch, ns, name string) error {
	p := &networkv1alpha1.SwitchPort{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name,
		Labels: map[string]string{switchport.LabelSwitchName: sw.Name, switchport.LabelSwitchNamespace: sw.Namespace},
	}}
	// Owner references cannot cross namespaces: the labels and the Switch's finalizer do
	// that job for ports in tenant namespaces.
	if ns == sw.Namespace {
		if err := controllerutil.SetControllerReference(sw, p, r.Scheme); err != nil {
			return err
		}
	}
	if err := r.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
