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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/vlan"
)

// +kubebuilder:rbac:groups=metal3.io,resources=switchresourcelimits/status,verbs=get;update;patch

// LimitReconciler reports the VLANs in use in a namespace on its SwitchResourceLimit.
type LimitReconciler struct {
	client.Client
}

// Reconcile recounts the namespace's VLANs from the configurations its ports hold.
func (r *LimitReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	limit := &networkv1alpha1.SwitchResourceLimit{}
	if err := r.Get(ctx, req.NamespacedName, limit); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	used, err := UsedVLANs(ctx, r.Client, req.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	base := limit.DeepCopy()
	limit.Status.UsedVLANs = used.String()
	limit.Status.ObservedGeneration = limit.Generation
	cond := metav1.Condition{Type: networkv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "WithinRange",
		Message: "every VLAN in use lies inside the range", ObservedGeneration: limit.Generation}
	allowed, err := vlan.Parse(string(limit.Spec.VLANRange))
	switch {
	case err != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "InvalidRange", err.Error()
	case !used.SubsetOf(allowed):
		cond.Status, cond.Reason = metav1.ConditionFalse, "OutOfRange"
		cond.Message = fmt.Sprintf("VLANs %s are in use outside the range", used.Difference(allowed))
	}
	meta.SetStatusCondition(&limit.Status.Conditions, cond)
	if equality.Semantic.DeepEqual(base.Status, limit.Status) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.Status().Patch(ctx, limit, client.MergeFrom(base))
}

// UsedVLANs counts the VLANs of tenant configurations that the namespace's ports hold on
// their switches (a clean port's parking VLAN or provisioning network is the infra team's).
// A VLAN stays in use while any port holds it, hence the reference count. c is the manager's
// cache (IndexTenant).
func UsedVLANs(ctx context.Context, c client.Reader, namespace string) (vlan.Set, error) {
	ports, err := tenantPorts(ctx, c, namespace)
	if err != nil {
		return vlan.Set{}, err
	}
	var u vlan.Usage
	for i := range ports {
		if heldTenant(&ports[i]) != namespace {
			continue
		}
		if s, err := VLANsOf(ports[i].Status.Configuration); err == nil {
			u.Acquire(s)
		}
	}
	return u.InUse(), nil
}

// ClaimedVLANs are the VLANs the namespace's ports hold or are about to: those of the
// configurations they hold and of those linked to them, applied or not yet. The limit webhook
// counts these, so a link being applied cannot slip under a shrinking limit. api is the API
// reader, not the cache: a link admitted a moment ago must count, and limits change seldom
// enough that listing every port of the cluster here costs nothing that matters.
func ClaimedVLANs(ctx context.Context, api client.Reader, namespace string) (map[int][]string, error) {
	list := &networkv1alpha1.SwitchPortList{}
	if err := api.List(ctx, list); err != nil {
		return nil, err
	}
	ports := ofTenant(list.Items, namespace)
	out := map[int][]string{}
	note := func(s vlan.Set, who string) {
		for id := range s.All() {
			out[id] = append(out[id], who)
		}
	}
	for i := range ports {
		p := &ports[i]
		who := "SwitchPort " + p.Name
		if p.Namespace != namespace {
			who = "SwitchPort " + p.Namespace + "/" + p.Name
		}
		if heldTenant(p) == namespace {
			if s, err := VLANsOf(p.Status.Configuration); err == nil {
				note(s, who)
			}
		}
		ref := refOf(p)
		if ref == nil || ref.Namespace != namespace || (p.Status.ConfigurationRef != nil && *p.Status.ConfigurationRef == *ref && holdsTenant(p)) {
			continue
		}
		cfg := &networkv1alpha1.SwitchPortConfiguration{}
		if err := api.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cfg); err != nil {
			continue
		}
		if s, err := VLANsOf(&cfg.Spec); err == nil {
			note(s, who+" (linked "+ref.Name+")")
		}
	}
	return out, nil
}
