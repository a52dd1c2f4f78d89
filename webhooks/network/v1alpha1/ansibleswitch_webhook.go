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

package v1alpha1

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// +kubebuilder:webhook:path=/validate-metal3-io-v1alpha1-ansibleswitch,mutating=false,failurePolicy=fail,sideEffects=None,groups=metal3.io,resources=ansibleswitches,verbs=create;update,versions=v1alpha1,name=vansibleswitch-v1alpha1.metal3.io,admissionReviewVersions=v1

// AnsibleSwitchWebhook checks how a switch is reached, and that no other AnsibleSwitch
// reaches the same device: two objects on one device would let two Switches drive its ports.
type AnsibleSwitchWebhook struct {
	Reader client.Reader
	// Reviewer creates SubjectAccessReviews.
	Reviewer client.Writer
}

var _ admission.Validator[*networkv1alpha1.AnsibleSwitch] = AnsibleSwitchWebhook{}

// KnownOS are the network OSes of the network-runner role.
var KnownOS = []string{"cumulus", "dellemc.os9.os9", "dellos10", "enos", "eos", "junos", "nxos", "openvswitch"}

// ValidateCreate checks a new AnsibleSwitch.
func (w AnsibleSwitchWebhook) ValidateCreate(ctx context.Context, a *networkv1alpha1.AnsibleSwitch) (admission.Warnings, error) {
	return w.validate(ctx, nil, a)
}

// ValidateUpdate checks a changed AnsibleSwitch.
func (w AnsibleSwitchWebhook) ValidateUpdate(ctx context.Context, old, a *networkv1alpha1.AnsibleSwitch) (admission.Warnings, error) {
	return w.validate(ctx, old, a)
}

// ValidateDelete allows deletion.
func (AnsibleSwitchWebhook) ValidateDelete(context.Context, *networkv1alpha1.AnsibleSwitch) (admission.Warnings, error) {
	return nil, nil
}

func (w AnsibleSwitchWebhook) validate(ctx context.Context, old, a *networkv1alpha1.AnsibleSwitch) (admission.Warnings, error) {
	list := &networkv1alpha1.AnsibleSwitchList{}
	if err := w.Reader.List(ctx, list); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	for _, other := range list.Items {
		if (other.Namespace != a.Namespace || other.Name != a.Name) && DeviceOf(&other) == DeviceOf(a) {
			errs = append(errs, field.Duplicate(field.NewPath("spec", "ip"), fmt.Sprintf(
				"%s (AnsibleSwitch %s/%s already reaches this device, %s: one device, one AnsibleSwitch and one Switch)",
				a.Spec.IP, other.Namespace, other.Name, DeviceOf(a))))
		}
	}
	var warns admission.Warnings
	spec := field.NewPath("spec")
	known := false
	for _, os := range KnownOS {
		known = known || os == a.Spec.OS
	}
	if !known {
		errs = append(errs, field.NotSupported(spec.Child("os"), a.Spec.OS, KnownOS))
	}
	if net.ParseIP(a.Spec.IP) == nil {
		for _, msg := range validation.IsDNS1123Subdomain(a.Spec.IP) {
			errs = append(errs, field.Invalid(spec.Child("ip"), a.Spec.IP, "neither an IP address nor a DNS name: "+msg))
		}
	}
	if a.Spec.Port < 0 || a.Spec.Port > 65535 {
		errs = append(errs, field.Invalid(spec.Child("port"), a.Spec.Port, "must be 1..65535"))
	}
	switch {
	case a.Spec.OS == "openvswitch" && a.Spec.Bridge == "":
		errs = append(errs, field.Required(spec.Child("bridge"), "the Open vSwitch bridge holding the ports"))
	case a.Spec.OS != "openvswitch" && a.Spec.Bridge != "":
		warns = append(warns, "spec.bridge is only used with os openvswitch")
	}
	for _, msg := range validation.IsDNS1123Subdomain(a.Spec.CredentialsSecret.Name) {
		errs = append(errs, field.Invalid(spec.Child("credentialsSecret", "name"), a.Spec.CredentialsSecret.Name, msg))
	}
	if len(errs) == 0 {
		denied, err := w.secretAccess(ctx, old, a)
		if err != nil {
			return nil, err
		}
		errs = append(errs, denied...)
	}
	return warns, invalid(kindAnsibleSwitch, a.Name, errs)
}

// DeviceOf names the device an AnsibleSwitch reaches: its address and SSH port, and for
// Open vSwitch the bridge (two bridges of one host are two switches).
func DeviceOf(a *networkv1alpha1.AnsibleSwitch) string {
	port := a.Spec.Port
	if port == 0 {
		port = 22
	}
	d := net.JoinHostPort(strings.ToLower(a.Spec.IP), strconv.Itoa(int(port)))
	if a.Spec.OS == "openvswitch" {
		d += " bridge " + a.Spec.Bridge
	}
	return d
}
