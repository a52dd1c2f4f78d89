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
// Credentials are read one Secret at a time, straight from the apiserver; Secrets are
// watched metadata-only (setup.go), so no Secret data sits in the cache.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

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
}

// machine is one reconcile's view of a port: the object and what it refers to.
type machine struct {
	port     *networkv1alpha1.SwitchPort
	deleting bool
	// sw is the port's Switch; hasSwitch is false for a port not made by a Switch.
	sw        types.NamespacedName
	hasSwitch bool
	// info is the port's entry in the Switch, nil when the entry (or the Switch) is gone.
	info *networkv1alpha1.PortInfo
	// portName is the port's name on the switch.
	portName string
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
	m, err := r.load(ctx, port)
	if err != nil {
		return ctrl.Result{}, err
	}
	base := port.DeepCopy()

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
		r.note(port, state, o)
		if !o.then || o.next == state {
			break
		}
		state = o.next
	}

	if !equality.Semantic.DeepEqual(base.Status, port.Status) {
		if err := r.Status().Patch(ctx, port, client.MergeFrom(base)); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: r.after(req.NamespacedName, o)}, nil
}

// deletionState is where a port being deleted goes: a port that may hold configuration
// on the switch is cleaned first, even half-configured ones.
func deletionState(port *networkv1alpha1.SwitchPort) networkv1alpha1.SwitchPortState {
	switch s := port.Status.State; {
	case s == networkv1alpha1.StateCleaning || s == networkv1alpha1.StateDeleting:
		return s
	case port.Status.Configuration != nil || s == networkv1alpha1.StateConfiguring || s == networkv1alpha1.StateActive:
		return networkv1alpha1.StateCleaning
	default:
		return networkv1alpha1.StateDeleting
	}
}

// note records an outcome in the status and, when it is news, as an Event.
func (r *Reconciler) note(port *networkv1alpha1.SwitchPort, from networkv1alpha1.SwitchPortState, o outcome) {
	record(port, o)
	if o.warn || o.event || o.next != from {
		r.Recorder.Eventf(port, nil, eventType(o), o.reason, string(o.next), "%s", o.message)
	}
}

// after is the requeue delay of an outcome: exponential backoff for failures that retry.
func (r *Reconciler) after(key types.NamespacedName, o outcome) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !o.retry {
		delete(r.failures, key)
		return o.requeue
	}
	n := r.failures[key]
	r.failures[key] = n + 1
	d := r.RetryBase << min(n, 16)
	if d <= 0 || d > r.RetryMax {
		d = r.RetryMax
	}
	return d
}

// load finds the port's Switch and its entry there.
func (r *Reconciler) load(ctx context.Context, port *networkv1alpha1.SwitchPort) (*machine, error) {
	m := &machine{port: port, deleting: !port.DeletionTimestamp.IsZero(), portName: port.Annotations[AnnotationPortName]}
	m.sw, m.hasSwitch = SwitchOf(port)
	if !m.hasSwitch {
		return m, nil
	}
	sw := &networkv1alpha1.Switch{}
	if err := r.Get(ctx, m.sw, sw); err != nil {
		return m, client.IgnoreNotFound(err)
	}
	if e, ok := sw.Spec.Ports[port.Name]; ok && entryNamespace(sw, e) == port.Namespace {
		m.info = &e
		m.portName = e.Name
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
