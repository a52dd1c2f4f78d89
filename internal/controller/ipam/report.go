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

package ipam

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// claimStatus is what differs between the two claim kinds at the end of a reconcile: how
// an outcome becomes status, and where the status and its conditions are.
type claimStatus[T client.Object] struct {
	kind       string // the claim kind, as the metrics name it
	set        func(T, outcome)
	status     func(T) any
	conditions func(T) []metav1.Condition
}

var (
	metal3Status = claimStatus[*ipamv1alpha1.IPClaim]{
		kind:       kindMetal3,
		set:        setIPClaimStatus,
		status:     func(c *ipamv1alpha1.IPClaim) any { return c.Status },
		conditions: func(c *ipamv1alpha1.IPClaim) []metav1.Condition { return c.Status.Conditions },
	}
	capiStatus = claimStatus[*capiipamv1beta2.IPAddressClaim]{
		kind:       kindCAPI,
		set:        setIPAddressClaimStatus,
		status:     func(c *capiipamv1beta2.IPAddressClaim) any { return c.Status },
		conditions: func(c *capiipamv1beta2.IPAddressClaim) []metav1.Condition { return c.Status.Conditions },
	}
)

// report ends a claim's reconcile: the outcome is written to the status in one patch, only
// when it changed, with a Warning Event when the claim newly fails. before is the claim as
// read at the start.
func (k claimStatus[T]) report(ctx context.Context, c client.Client, rec events.EventRecorder, before, claim T, out outcome) (ctrl.Result, error) {
	if out.reason == "" {
		return ctrl.Result{RequeueAfter: out.retry}, nil
	}
	k.set(claim, out)
	if equality.Semantic.DeepEqual(k.status(before), k.status(claim)) {
		return ctrl.Result{RequeueAfter: out.retry}, nil
	}
	if out.address == "" && readyReason(k.conditions(before)) != out.reason {
		rec.Eventf(claim, nil, corev1.EventTypeWarning, out.reason, "Allocate", "%s", out.message)
	}
	if err := c.Status().Patch(ctx, claim, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if out.address != "" {
		observeAllocation(k.kind, claim, meta.IsStatusConditionTrue(k.conditions(before), ipamv1alpha1.ConditionReady))
	}
	return ctrl.Result{RequeueAfter: out.retry}, nil
}
