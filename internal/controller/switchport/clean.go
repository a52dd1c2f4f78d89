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

	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// CleanPolicyOf is the clean policy of a physical port: the Switch-wide one, overridden field
// by field by the entry of that physical port, if the Switch still has one.
func CleanPolicyOf(sw *networkv1alpha1.Switch, physical string) networkv1alpha1.CleanPolicy {
	p := *sw.Spec.Clean.DeepCopy()
	for _, e := range sw.Spec.Ports {
		if e.Name != physical || e.Clean == nil {
			continue
		}
		if e.Clean.Mode != "" {
			p.Mode = e.Clean.Mode
		}
		if e.Clean.ParkingVLAN != nil {
			v := *e.Clean.ParkingVLAN
			p.ParkingVLAN = &v
		}
		if e.Clean.ProvisioningConfiguration != "" {
			p.ProvisioningConfiguration = e.Clean.ProvisioningConfiguration
		}
	}
	if p.Mode == "" {
		p.Mode = networkv1alpha1.CleanDeconfigured
	}
	return p
}

// parkingOf is the parking VLAN of a physical port, 0 if its Switch names none (or is gone).
func parkingOf(sw *networkv1alpha1.Switch, physical string) int {
	if sw == nil {
		return 0
	}
	if v := CleanPolicyOf(sw, physical).ParkingVLAN; v != nil {
		return int(*v)
	}
	return 0
}

// cleanState is what a clean physical port holds.
type cleanState struct {
	mode networkv1alpha1.CleanMode
	spec *networkv1alpha1.SwitchPortConfigurationSpec
	// ref is the provisioning configuration, nil for a parked port.
	ref *networkv1alpha1.ConfigurationRef
	// native is the parking VLAN a tagged-only provisioning configuration takes as native VLAN.
	native int32
}

// errNoCleanState explains why a port's clean state cannot be built; the port waits.
type errNoCleanState struct{ msg string }

func (e errNoCleanState) Error() string { return e.msg }

// cleanStateOf builds the clean state of a physical port of a Switch. A deconfigured port
// is an access port of the parking VLAN: up, no trunks, no access rules.
func cleanStateOf(ctx context.Context, c client.Reader, sw *networkv1alpha1.Switch, physical string) (cleanState, error) {
	p := CleanPolicyOf(sw, physical)
	if p.Mode == networkv1alpha1.CleanProvisioning {
		ref := &networkv1alpha1.ConfigurationRef{Namespace: sw.Namespace, Name: p.ProvisioningConfiguration}
		if ref.Name == "" {
			return cleanState{}, errNoCleanState{fmt.Sprintf("Switch %s/%s cleans port %s to provisioning but names no provisioningConfiguration", sw.Namespace, sw.Name, physical)}
		}
		cfg := &networkv1alpha1.SwitchPortConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cfg); err != nil {
			return cleanState{}, errNoCleanState{fmt.Sprintf("provisioning configuration %s/%s of Switch %s: %v", ref.Namespace, ref.Name, sw.Name, err)}
		}
		if !HasVLANs(&cfg.Spec) {
			return cleanState{}, errNoCleanState{fmt.Sprintf("provisioning configuration %s/%s has neither untaggedVLAN nor vlans", ref.Namespace, ref.Name)}
		}
		return cleanState{mode: p.Mode, spec: cfg.Spec.DeepCopy(), ref: ref, native: nativeOf(&cfg.Spec, parkingOf(sw, physical))}, nil
	}
	if p.ParkingVLAN == nil {
		return cleanState{}, errNoCleanState{fmt.Sprintf("Switch %s/%s names no parking VLAN (spec.clean.parkingVLAN)", sw.Namespace, sw.Name)}
	}
	v := *p.ParkingVLAN
	return cleanState{mode: networkv1alpha1.CleanDeconfigured, spec: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: &v}}, nil
}

// HasVLANs reports whether a configuration says which VLANs the port carries. One that
// does not would leave the port on the device's default, which on Open vSwitch is a trunk of
// every VLAN.
func HasVLANs(c *networkv1alpha1.SwitchPortConfigurationSpec) bool {
	return c != nil && (c.UntaggedVLAN != nil || c.VLANs != "")
}
