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

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
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

func handleNone(context.Context, *Reconciler, *machine) outcome {
	return outcome{next: networkv1alpha1.StateIdle, reason: ReasonIdle, message: "port is managed; no configuration applied", then: true}
}

func handleIdle(_ context.Context, _ *Reconciler, m *machine) outcome {
	if ref := refOf(m.port); ref != nil {
		return outcome{next: networkv1alpha1.StateConfiguring, reason: ReasonConfiguring, message: "configuration " + describe(ref) + " linked", then: true}
	}
	return outcome{next: networkv1alpha1.StateIdle, reason: ReasonIdle, message: "no configuration linked"}
}

func handleConfiguring(ctx context.Context, r *Reconciler, m *machine) outcome {
	ref := refOf(m.port)
	if ref == nil {
		return unlinked(m)
	}
	stay := func(reason, msg string) outcome {
		return outcome{next: networkv1alpha1.StateConfiguring, reason: reason, message: msg, warn: true}
	}
	cfg, o := r.verify(ctx, m, ref)
	if o != nil {
		return *o
	}
	d, o := r.driverFor(ctx, m, networkv1alpha1.StateConfiguring)
	if o != nil {
		return *o
	}
	if err := r.Batcher.Apply(ctx, m.sw, d, switchdriver.Change{Port: m.portName, Config: cfg}); err != nil {
		o := stay(FailureReason(err, ReasonApplyFailed), fmt.Sprintf("applying %s to port %s failed: %v", describe(ref), m.portName, err))
		o.retry = true
		return o
	}
	return outcome{
		next: networkv1alpha1.StateActive, reason: ReasonActive, event: true,
		message: fmt.Sprintf("port %s holds configuration %s", m.portName, describe(ref)),
		applied: &appliedConfig{ref: ref, spec: cfg},
	}
}

// verify returns the linked configuration if it may go on the port, or why not.
func (r *Reconciler) verify(ctx context.Context, m *machine, ref *networkv1alpha1.ConfigurationRef) (*networkv1alpha1.SwitchPortConfigurationSpec, *outcome) {
	stay := func(reason, msg string) *outcome {
		return &outcome{next: networkv1alpha1.StateConfiguring, reason: reason, message: msg, warn: true}
	}
	if ref.Namespace != m.port.Namespace {
		return nil, stay(ReasonInvalidConfiguration, fmt.Sprintf("configuration %s is in another namespace; a port only takes configurations of its own namespace", describe(ref)))
	}
	if m.info == nil {
		return nil, stay(ReasonSwitchNotFound, "the port has no entry in a Switch")
	}
	c := &networkv1alpha1.SwitchPortConfiguration{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, c); err != nil {
		return nil, stay(ReasonConfigurationNotFound, fmt.Sprintf("configuration %s: %v", describe(ref), err))
	}
	limit := &networkv1alpha1.SwitchResourceLimit{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: m.port.Namespace, Name: networkv1alpha1.SwitchResourceLimitName}, limit); err != nil {
		return nil, stay(ReasonLimitNotFound, fmt.Sprintf("SwitchResourceLimit %s/%s: %v", m.port.Namespace, networkv1alpha1.SwitchResourceLimitName, err))
	}
	path := field.NewPath("spec")
	errs := FitsPort(path, &c.Spec, m.info)
	errs = append(errs, FitsLimit(path, &c.Spec, limit)...)
	if len(errs) > 0 {
		return nil, stay(ReasonInvalidConfiguration, fmt.Sprintf("configuration %s does not fit: %v", describe(ref), errs.ToAggregate()))
	}
	return &c.Spec, nil
}

func handleActive(ctx context.Context, r *Reconciler, m *machine) outcome {
	ref := refOf(m.port)
	if ref == nil {
		return unlinked(m)
	}
	reconfigure := func(msg string) outcome {
		return outcome{next: networkv1alpha1.StateConfiguring, reason: ReasonConfiguring, message: msg, event: true, then: true}
	}
	if applied := m.port.Status.ConfigurationRef; applied == nil || *applied != *ref {
		return reconfigure("linked configuration changed to " + describe(ref) + "; reconfiguring in place")
	}
	c := &networkv1alpha1.SwitchPortConfiguration{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, c); err != nil {
		return outcome{next: networkv1alpha1.StateActive, reason: ReasonConfigurationNotFound, warn: true,
			message: fmt.Sprintf("the switch keeps the last applied configuration, but %s: %v", describe(ref), client.IgnoreNotFound(err))}
	}
	if !equality.Semantic.DeepEqual(&c.Spec, m.port.Status.Configuration) {
		return reconfigure("configuration " + describe(ref) + " was edited; reconfiguring in place")
	}
	d, o := r.driverFor(ctx, m, networkv1alpha1.StateActive)
	if o != nil {
		return *o
	}
	got, err := r.Batcher.Read(ctx, m.sw, d, m.portName)
	if err != nil {
		return outcome{next: networkv1alpha1.StateActive, reason: FailureReason(err, ReasonReadFailed), warn: true, retry: true,
			message: fmt.Sprintf("reading port %s back failed: %v", m.portName, err)}
	}
	if !equality.Semantic.DeepEqual(got, m.port.Status.Configuration) {
		return outcome{next: networkv1alpha1.StateConfiguring, reason: ReasonDrift, warn: true, then: true,
			message: fmt.Sprintf("port %s differs on the switch from configuration %s; reapplying", m.portName, describe(ref))}
	}
	return outcome{next: networkv1alpha1.StateActive, reason: ReasonActive, requeue: r.DriftInterval,
		message: fmt.Sprintf("port %s holds configuration %s", m.portName, describe(ref))}
}

// unlinked is where a port goes when its configuration link is removed.
func unlinked(m *machine) outcome {
	if m.port.Status.Configuration != nil || m.port.Status.State == networkv1alpha1.StateConfiguring {
		return outcome{next: networkv1alpha1.StateCleaning, reason: ReasonCleaning, message: "configuration unlinked; cleaning the port", then: true}
	}
	return outcome{next: networkv1alpha1.StateIdle, reason: ReasonIdle, message: "no configuration linked"}
}

func handleCleaning(ctx context.Context, r *Reconciler, m *machine) outcome {
	d, o := r.driverFor(ctx, m, networkv1alpha1.StateCleaning)
	if o != nil {
		return *o
	}
	if err := r.Batcher.Apply(ctx, m.sw, d, switchdriver.Change{Port: m.portName}); err != nil {
		return outcome{next: networkv1alpha1.StateCleaning, reason: FailureReason(err, ReasonCleanFailed), warn: true, retry: true,
			message: fmt.Sprintf("cleaning port %s failed: %v", m.portName, err)}
	}
	clean := &appliedConfig{}
	switch {
	case m.deleting:
		return outcome{next: networkv1alpha1.StateDeleting, reason: ReasonDeleting, message: "port cleaned; deleting", applied: clean, then: true}
	case refOf(m.port) != nil:
		return outcome{next: networkv1alpha1.StateConfiguring, reason: ReasonConfiguring, message: "port cleaned; a configuration is linked again", applied: clean, then: true}
	default:
		return outcome{next: networkv1alpha1.StateIdle, reason: ReasonIdle, message: fmt.Sprintf("port %s cleaned", m.portName), applied: clean, event: true}
	}
}

func handleDeleting(ctx context.Context, r *Reconciler, m *machine) outcome {
	if !m.deleting {
		return outcome{next: networkv1alpha1.StateIdle, reason: ReasonIdle, message: "no configuration linked"}
	}
	base := m.port.DeepCopy()
	controllerutil.RemoveFinalizer(m.port, Finalizer)
	if err := r.Patch(ctx, m.port, client.MergeFrom(base)); err != nil && client.IgnoreNotFound(err) != nil {
		return outcome{next: networkv1alpha1.StateDeleting, reason: ReasonDeleting, warn: true, retry: true, message: "removing the finalizer: " + err.Error()}
	}
	return outcome{next: networkv1alpha1.StateDeleting, gone: true}
}
