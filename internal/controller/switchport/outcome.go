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
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// ConditionConfigured is true when the switch holds the linked configuration.
const ConditionConfigured = "Configured"

// Condition reasons, also the reasons of the Events.
const (
	ReasonIdle                  = "Idle"
	ReasonActive                = "Active"
	ReasonConfiguring           = "Configuring"
	ReasonCleaning              = "Cleaning"
	ReasonDeleting              = "Deleting"
	ReasonConfigurationNotFound = "ConfigurationNotFound"
	ReasonInvalidConfiguration  = "InvalidConfiguration"
	ReasonLimitNotFound         = "LimitNotFound"
	ReasonSwitchNotFound        = "SwitchNotFound"
	ReasonProviderNotFound      = "ProviderNotFound"
	ReasonCredentialsNotFound   = "CredentialsNotFound"
	ReasonDriverUnavailable     = "DriverUnavailable"
	ReasonApplyFailed           = "ApplyFailed"
	ReasonCleanFailed           = "CleanFailed"
	ReasonReadFailed            = "ReadFailed"
	ReasonDrift                 = "Drift"
	ReasonAuthenticationFailed  = "AuthenticationFailed"
	ReasonSwitchUnreachable     = "SwitchUnreachable"
	ReasonTimedOut              = "TimedOut"
)

// FailureReason names a driver failure by its cause where the driver knows it.
func FailureReason(err error, fallback string) string {
	switch {
	case errors.Is(err, switchdriver.ErrAuthentication):
		return ReasonAuthenticationFailed
	case errors.Is(err, switchdriver.ErrUnreachable):
		return ReasonSwitchUnreachable
	case errors.Is(err, switchdriver.ErrTimeout):
		return ReasonTimedOut
	}
	return fallback
}

// outcome is what a handler decided: the next state, why, and what to tell people. The
// reconciler turns it into status, conditions and an Event in one place (record).
type outcome struct {
	next    networkv1alpha1.SwitchPortState
	reason  string
	message string
	// warn marks a failure or a refusal: a Warning Event and Ready false.
	warn bool
	// retry asks for a retry with exponential backoff (driver failures).
	retry bool
	// then runs the next state's handler in the same reconcile.
	then bool
	// gone means the finalizer was removed: there is no status left to write.
	gone bool
	// event is set when the outcome is worth an Event although it is not a failure.
	event   bool
	requeue time.Duration
	// applied replaces status.configuration and status.configurationRef when set.
	applied *appliedConfig
}

// appliedConfig is what the switch holds; a nil ref and spec mean a clean port.
type appliedConfig struct {
	ref  *networkv1alpha1.ConfigurationRef
	spec *networkv1alpha1.SwitchPortConfigurationSpec
}

// record writes the outcome into the port's status: the only place that sets the state,
// the conditions and the applied configuration.
func record(port *networkv1alpha1.SwitchPort, o outcome) {
	st := &port.Status
	st.State = o.next
	st.ObservedGeneration = port.Generation
	if o.applied != nil {
		st.ConfigurationRef = o.applied.ref.DeepCopy()
		st.Configuration = o.applied.spec.DeepCopy()
	}
	steady := !o.warn && (o.next == networkv1alpha1.StateIdle || o.next == networkv1alpha1.StateActive)
	ready := metav1.Condition{Type: networkv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: o.reason, Message: o.message, ObservedGeneration: port.Generation}
	if steady {
		ready.Status = metav1.ConditionTrue
	}
	configured := metav1.Condition{Type: ConditionConfigured, Status: metav1.ConditionFalse, Reason: o.reason, Message: o.message, ObservedGeneration: port.Generation}
	if o.next == networkv1alpha1.StateActive {
		configured.Status = metav1.ConditionTrue
		configured.Reason = ReasonActive
		if st.ConfigurationRef != nil {
			configured.Message = "the switch holds configuration " + st.ConfigurationRef.Name
		}
	}
	meta.SetStatusCondition(&st.Conditions, ready)
	meta.SetStatusCondition(&st.Conditions, configured)
}

func eventType(o outcome) string {
	if o.warn {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}
