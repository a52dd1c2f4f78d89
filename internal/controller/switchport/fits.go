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
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/vlan"
)

// VLANsOf returns every VLAN a configuration puts on a port, untagged and tagged.
func VLANsOf(c *networkv1alpha1.SwitchPortConfigurationSpec) (vlan.Set, error) {
	if c == nil {
		return vlan.Set{}, nil
	}
	s, err := vlan.Parse(string(c.VLANs))
	if err != nil {
		return vlan.Set{}, err
	}
	if c.UntaggedVLAN != nil {
		if !s.Add(int(*c.UntaggedVLAN)) {
			return vlan.Set{}, fmt.Errorf("untagged VLAN %d is not a VLAN id", *c.UntaggedVLAN)
		}
	}
	return s, nil
}

// FitsPort checks a configuration (at path) against what the Switch allows on the port.
// The webhooks and the state machine share it, so a configuration the apiserver accepted
// is the one the reconciler applies.
func FitsPort(path *field.Path, c *networkv1alpha1.SwitchPortConfigurationSpec, port *networkv1alpha1.PortInfo) field.ErrorList {
	var errs field.ErrorList
	if port == nil {
		return nil
	}
	if port.Disabled {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("port %s is disabled on the switch and may not be configured", port.Name)))
	}
	if port.TrunkDisable && c.VLANs != "" {
		errs = append(errs, field.Forbidden(path.Child("vlans"), fmt.Sprintf("port %s may not be a trunk (trunkDisable): tagged VLANs are not allowed", port.Name)))
	}
	if port.VLANRange == "" {
		return errs
	}
	allowed, err := vlan.Parse(string(port.VLANRange))
	if err != nil {
		return append(errs, field.Invalid(path, port.VLANRange, "the port's vlanRange does not parse: "+err.Error()))
	}
	errs = append(errs, inside(path, c, allowed, fmt.Sprintf("the vlanRange %q of port %s", port.VLANRange, port.Name))...)
	return errs
}

// FitsLimit checks a configuration against the namespace's SwitchResourceLimit.
func FitsLimit(path *field.Path, c *networkv1alpha1.SwitchPortConfigurationSpec, limit *networkv1alpha1.SwitchResourceLimit) field.ErrorList {
	allowed, err := vlan.Parse(string(limit.Spec.VLANRange))
	if err != nil {
		return field.ErrorList{field.Invalid(path, limit.Spec.VLANRange, "the namespace's user-limit does not parse: "+err.Error())}
	}
	return inside(path, c, allowed, fmt.Sprintf("the namespace's SwitchResourceLimit user-limit (%s)", limit.Spec.VLANRange))
}

func inside(path *field.Path, c *networkv1alpha1.SwitchPortConfigurationSpec, allowed vlan.Set, what string) field.ErrorList {
	var errs field.ErrorList
	if c.UntaggedVLAN != nil && !allowed.Contains(int(*c.UntaggedVLAN)) {
		errs = append(errs, field.Invalid(path.Child("untaggedVLAN"), *c.UntaggedVLAN, "VLAN is outside "+what))
	}
	tagged, err := vlan.Parse(string(c.VLANs))
	if err != nil {
		return append(errs, field.Invalid(path.Child("vlans"), c.VLANs, err.Error()))
	}
	if extra := tagged.Difference(allowed); !extra.IsEmpty() {
		errs = append(errs, field.Invalid(path.Child("vlans"), c.VLANs, fmt.Sprintf("VLANs %s are outside %s", extra, what)))
	}
	return errs
}
