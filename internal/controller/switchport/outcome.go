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

// ConditionFailed is true while the last attempt to drive the switch failed; the port keeps
// retrying with backoff (the seed's error state, without giving up).
const ConditionFailed = "Failed"

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
	// ReasonCredentialsNotGranted: the credentials Secret is in a namespace whose Secrets the
	// manager may not read; the message names the namespace and what to grant.
	ReasonCredentialsNotGranted = "CredentialsNotGranted"
	ReasonDriverUnavailable     = "DriverUnavailable"
	ReasonApplyFailed           = "ApplyFailed"
	ReasonCleanFailed           = "CleanFailed"
	ReasonReadFailed            = "ReadFailed"
	ReasonDrift                 = "Drift"
	ReasonAuthenticationFailed  = "AuthenticationFailed"
	ReasonSwitchUnreachable     = "SwitchUnreachable"
	ReasonTimedOut              = "TimedOut"
	ReasonNotVouched            = "NotVouched"
	ReasonPortBusy              = "PortBusy"
	ReasonOutsideLimit          = "OutsideLimit"
	ReasonNoCleanState          = "NoCleanState"
	ReasonCleanNotVerified      = "CleanNotVerified"
	ReasonReleased              = "ReleasedWithoutCleaning"
	ReasonMoved                 = "PhysicalPortChanged"
	ReasonSucceeded             = "Succeeded"
	// ReasonNotSaved: the switch runs the port's change but saving it failed.
	ReasonNotSaved = "NotSaved"
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
	case errors.Is(err, switchdriver.ErrUnavailable):
		return ReasonDriverUnavailable
	case errors.Is(err, switchdriver.ErrNotSaved):
		return ReasonNotSaved
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
	event bool
	// asked marks a state change that is the direct answer to the tenant's own edit (a link,
	// a relink): the status says so at once, and the Event of its end (Active, or the
	// failure) follows, so it gets no Event of its own. A burst of links would otherwise cost
	// the apiserver one more write per port, on the way to the switch run.
	asked   bool
	requeue time.Duration
	// applied replaces the status record (where and what) when set.
	applied *appliedConfig
	// pending marks a request on its way to the switch: nothing is known of its outcome yet,
	// so the Failed condition stays as it is.
	pending bool
	// keep leaves the status as it is: the port waits out a backoff.
	keep bool
	// detail is the driver's full error: it names the switch's address and login, so it
	// goes on the Switch and the AnsibleSwitch (the infra team's), never on the SwitchPort.
	detail string
}

// appliedConfig is what a physical port holds. A nil spec with a target is a port claimed
// for a change whose outcome is unknown: it is cleaned before anything else.
type appliedConfig struct {
	target target
	clean  networkv1alpha1.CleanMode
	ref    *networkv1alpha1.ConfigurationRef
	spec   *networkv1alpha1.SwitchPortConfigurationSpec
	// native is the parking VLAN a tagged-only trunk took as native VLAN (nativeOf).
	native int32
}

// nativeOf is the native VLAN a configuration's port takes from its parking VLAN: the
// parking VLAN for a trunk without an untagged VLAN, else 0.
func nativeOf(spec *networkv1alpha1.SwitchPortConfigurationSpec, parking int) int32 {
	if spec == nil || spec.UntaggedVLAN != nil || spec.VLANs == "" {
		return 0
	}
	return int32(parking)
}

// record writes the outcome into the port's status: the only place that sets the state,
// the conditions and the applied configuration.
func record(port *networkv1alpha1.SwitchPort, o outcome) {
	st := &port.Status
	st.State = o.next
	st.ObservedGeneration = port.Generation
	if a := o.applied; a != nil {
		st.Switch, st.PortName = nil, ""
		if a.target.port != "" {
			st.Switch = &networkv1alpha1.SwitchRef{Namespace: a.target.sw.Namespace, Name: a.target.sw.Name}
			st.PortName = a.target.port
		}
		st.Clean = a.clean
		st.ConfigurationRef = a.ref.DeepCopy()
		st.Configuration = a.spec.DeepCopy()
		st.NativeVLAN = a.native
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
	failed := metav1.Condition{Type: ConditionFailed, Status: metav1.ConditionFalse, Reason: ReasonSucceeded,
		Message: "the last switch run for this port succeeded or none was needed", ObservedGeneration: port.Generation}
	if o.warn && o.retry {
		failed.Status, failed.Reason, failed.Message = metav1.ConditionTrue, o.reason, o.message
	}
	meta.SetStatusCondition(&st.Conditions, ready)
	meta.SetStatusCondition(&st.Conditions, configured)
	if !o.pending {
		meta.SetStatusCondition(&st.Conditions, failed)
	}
}

func eventType(o outcome) string {
	if o.warn {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}
