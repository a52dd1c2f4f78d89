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

package ipamclaim

import (
	"fmt"
	"strings"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionAllocated is the claim's condition: True once status.ips holds its addresses.
const ConditionAllocated = "IPsAllocated"

// Reasons of ConditionAllocated, also the reasons of the claim's Events.
const (
	ReasonAllocated       = "Allocated"
	ReasonExhausted       = "Exhausted"
	ReasonNetworkNotFound = "NetworkNotFound"
	ReasonInvalidNetwork  = "InvalidNetworkConfig"
	ReasonAddressTaken    = "AddressTaken"
	// ReasonNotServed: the claim is not one rackwire's VM controller made for a VM that names
	// its NAD, so it gets no address.
	ReasonNotServed = "NotServed"
	// ReasonReleased is an Event only: the claim is going and its addresses are free.
	ReasonReleased = "Released"
)

// outcome is what a reconcile of a claim found; the claim's condition and Event come from it.
type outcome struct {
	reason  string
	message string
}

func (o outcome) ok() bool { return o.reason == ReasonAllocated }

func allocated(ips []string) outcome {
	return outcome{ReasonAllocated, "addresses " + strings.Join(ips, ", ") + " held for the claim"}
}

func exhausted(n string, e errExhausted) outcome {
	return outcome{ReasonExhausted, fmt.Sprintf("network %s: range %d has no free address", n, e.rangeIndex)}
}

// apply sets the claim's condition from the outcome and reports whether it changed, so that
// an Event is sent once per change, not once per retry.
func (o outcome) apply(claim *ipamclaimsv1alpha1.IPAMClaim) bool {
	status := metav1.ConditionFalse
	if o.ok() {
		status = metav1.ConditionTrue
	}
	return meta.SetStatusCondition(&claim.Status.Conditions, metav1.Condition{
		Type: ConditionAllocated, Status: status, Reason: o.reason, Message: o.message,
		ObservedGeneration: claim.Generation,
	})
}

func (o outcome) eventType() string {
	if o.ok() {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}
