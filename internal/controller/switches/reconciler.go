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

// Reasons of the Switch's Ready condition besides those of switchport.
const (
	ReasonReady             = "Ready"
	ReasonProviderCheckFail = "ProviderCheckFailed"
	ReasonPortConflict      = "PortConflict"
	ReasonDeleting          = "Deleting"
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
	var requeue time.Duration
	if !sw.DeletionTimestamp.IsZero() {
		left, err := r.retire(ctx, sw, ports, func(*networkv1alpha1.SwitchPort) bool { return true })
		if err != nil {
			return ctrl.Result{}, err
		}
		if left == 0 {
			controllerutil.RemoveFinalizer(sw, Finalizer)
			return ctrl.Result{}, client.IgnoreNotFound(r.Patch(ctx, sw, client.MergeFrom(base)))
		}
		cond = notReady(ReasonDeleting, fmt.Sprintf("waiting for %d SwitchPorts to be cleaned and deleted", left))
		requeue = 30 * time.Second
	} else {
		conflicts, err := r.ensurePorts(ctx, sw)
		if err != nil {
			return ctrl.Result{}, err
		}
		if _, err := r.retire(ctx, sw, ports, func(p *networkv1alpha1.SwitchPort) bool { return !wanted(sw, p) }); err != nil {
			return ctrl.Result{}, err
		}
		cond, requeue = r.check(ctx, sw)
		if len(conflicts) > 0 && cond.Status == metav1.ConditionTrue {
			cond = notReady(ReasonPortConflict, "SwitchPorts exist that belong to something else: "+strings.Join(conflicts, ", "))
		}
	}

	cond.ObservedGeneration = sw.Generation
	sw.Status.ObservedGeneration = sw.Generation
	meta.SetStatusCondition(&sw.Status.Conditions, cond)
	if !equality.Semantic.DeepEqual(base.Status, sw.Status) {
		r.Recorder.Eventf(sw, nil, eventType(cond), cond.Reason, "Reconcile", "%s", cond.Message)
		if err := r.Status().Patch(ctx, sw, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
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

// check resolves the provider and credentials and asks the switch whether it answers.
func (r *Reconciler) check(ctx context.Context, sw *networkv1alpha1.Switch) (metav1.Condition, time.Duration) {
	d, reason, err := switchport.Resolve(ctx, r.Client, r.Secrets, sw, r.Drivers)
	switch {
	case reason == switchport.ReasonCredentialsNotFound:
		// No Secret watch (the manager may not watch Secrets): look again.
		return notReady(reason, err.Error()), 15 * time.Second
	case err != nil:
		// A missing AnsibleSwitch comes back through its watch; an unavailable driver
		// does not come back at all.
		return notReady(reason, err.Error()), 0
	}
	if err := r.Batcher.Check(ctx, client.ObjectKeyFromObject(sw), d); err != nil {
		return notReady(switchport.FailureReason(err, ReasonProviderCheckFail), "the switch did not answer: "+err.Error()), time.Minute
	}
	return metav1.Condition{Type: networkv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonReady,
		Message: fmt.Sprintf("provider answered; %d ports", len(sw.Spec.Ports))}, 0
}

// portsOf lists the SwitchPorts the Switch made, in any namespace.
func (r *Reconciler) portsOf(ctx context.Context, sw *networkv1alpha1.Switch) ([]networkv1alpha1.SwitchPort, error) {
	list := &networkv1alpha1.SwitchPortList{}
	err := r.List(ctx, list, client.MatchingLabels{switchport.LabelSwitchName: sw.Name, switchport.LabelSwitchNamespace: sw.Namespace})
	return list.Items, err
}

func wanted(sw *networkv1alpha1.Switch, p *networkv1alpha1.SwitchPort) bool {
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

// ensurePorts creates the missing SwitchPorts and returns those that exist but are not
// the Switch's.
func (r *Reconciler) ensurePorts(ctx context.Context, sw *networkv1alpha1.Switch) ([]string, error) {
	names := make([]string, 0, len(sw.Spec.Ports))
	for n := range sw.Spec.Ports {
		names = append(names, n)
	}
	sort.Strings(names)
	var conflicts []string
	for _, name := range names {
		e := sw.Spec.Ports[name]
		ns := switchport.EntryNamespace(sw, e)
		p := &networkv1alpha1.SwitchPort{}
		err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)
		switch {
		case apierrors.IsNotFound(err):
			if err := r.create(ctx, sw, ns, name, e); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		default:
			if ref, ok := switchport.SwitchOf(p); !ok || ref != client.ObjectKeyFromObject(sw) {
				conflicts = append(conflicts, ns+"/"+name)
				continue
			}
			if p.Annotations[switchport.AnnotationPortName] != e.Name && p.DeletionTimestamp.IsZero() {
				base := p.DeepCopy()
				metav1.SetMetaDataAnnotation(&p.ObjectMeta, switchport.AnnotationPortName, e.Name)
				if err := r.Patch(ctx, p, client.MergeFrom(base)); err != nil {
					return nil, err
				}
			}
		}
	}
	return conflicts, nil
}

func (r *Reconciler) create(ctx context.Context, sw *networkv1alpha1.Switch, ns, name string, e networkv1alpha1.PortInfo) error {
	p := &networkv1alpha1.SwitchPort{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name,
		Labels:      map[string]string{switchport.LabelSwitchName: sw.Name, switchport.LabelSwitchNamespace: sw.Namespace},
		Annotations: map[string]string{switchport.AnnotationPortName: e.Name},
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
