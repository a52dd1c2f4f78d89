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
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/vlan"
)

// +kubebuilder:webhook:path=/validate-metal3-io-v1alpha1-switch,mutating=false,failurePolicy=fail,sideEffects=None,groups=metal3.io,resources=switches,verbs=create;update,versions=v1alpha1,name=vswitch-v1alpha1.metal3.io,admissionReviewVersions=v1

// SwitchWebhook checks a Switch's ports and clean policy, and that no other Switch drives the
// same device or names the same SwitchPorts.
type SwitchWebhook struct {
	Reader client.Reader
	// Reviewer creates the SubjectAccessReviews of the entries' namespaces (entryAccess).
	Reviewer client.Writer
}

var _ admission.Validator[*networkv1alpha1.Switch] = SwitchWebhook{}

// ValidateCreate checks a new Switch.
func (w SwitchWebhook) ValidateCreate(ctx context.Context, sw *networkv1alpha1.Switch) (admission.Warnings, error) {
	return w.validate(ctx, nil, sw)
}

// ValidateUpdate checks a changed Switch.
func (w SwitchWebhook) ValidateUpdate(ctx context.Context, old, sw *networkv1alpha1.Switch) (admission.Warnings, error) {
	return w.validate(ctx, old, sw)
}

// ValidateDelete allows deletion: the Switch's finalizer cleans its ports first.
func (SwitchWebhook) ValidateDelete(context.Context, *networkv1alpha1.Switch) (admission.Warnings, error) {
	return nil, nil
}

func (w SwitchWebhook) validate(ctx context.Context, old, sw *networkv1alpha1.Switch) (admission.Warnings, error) {
	errs := validateSwitch(sw)
	if w.Reviewer != nil {
		denied, err := entryAccess(ctx, w.Reviewer, old, sw)
		if err != nil {
			return nil, err
		}
		errs = append(errs, denied...)
	}
	others := &networkv1alpha1.SwitchList{}
	if err := w.Reader.List(ctx, others); err != nil {
		return nil, err
	}
	errs = append(errs, notShared(sw, others.Items)...)
	more, warns, err := w.cleanPolicy(ctx, sw)
	if err != nil {
		return nil, err
	}
	errs = append(errs, more...)
	return warns, invalid(kindSwitch, sw.Name, errs)
}

func validateSwitch(sw *networkv1alpha1.Switch) field.ErrorList {
	var errs field.ErrorList
	// The name goes into the label that ties the ports to their Switch.
	if len(sw.Name) > 63 {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), sw.Name, 63))
	}
	if sw.Spec.Provider.Kind != "AnsibleSwitch" {
		errs = append(errs, field.NotSupported(field.NewPath("spec", "provider", "kind"), sw.Spec.Provider.Kind, []string{"AnsibleSwitch"}))
	}
	seen := map[string]string{}
	for _, k := range entryNames(sw) {
		p := sw.Spec.Ports[k]
		path := field.NewPath("spec", "ports").Key(k)
		if _, err := vlan.Parse(string(p.VLANRange)); err != nil {
			errs = append(errs, field.Invalid(path.Child("vlanRange"), p.VLANRange, err.Error()))
		}
		if other, dup := seen[p.Name]; dup {
			errs = append(errs, field.Duplicate(path.Child("name"), fmt.Sprintf("%s (also the port of %s)", p.Name, other)))
		}
		seen[p.Name] = k
	}
	return errs
}

func entryNames(sw *networkv1alpha1.Switch) []string {
	keys := make([]string, 0, len(sw.Spec.Ports))
	for k := range sw.Spec.Ports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// notShared refuses a second Switch on one AnsibleSwitch (the AnsibleSwitch webhook keeps
// one AnsibleSwitch per device), and a SwitchPort that another Switch's entry names.
func notShared(sw *networkv1alpha1.Switch, others []networkv1alpha1.Switch) field.ErrorList {
	var errs field.ErrorList
	for i := range others {
		o := &others[i]
		if o.Namespace == sw.Namespace && o.Name == sw.Name {
			continue
		}
		if o.Namespace == sw.Namespace && o.Spec.Provider == sw.Spec.Provider {
			errs = append(errs, field.Duplicate(field.NewPath("spec", "provider", "name"), fmt.Sprintf(
				"%s (Switch %s already drives this device; one device has one Switch)", sw.Spec.Provider.Name, o.Name)))
		}
		for _, k := range entryNames(sw) {
			ns := switchport.EntryNamespace(sw, sw.Spec.Ports[k])
			if len(switchport.Vouchers([]networkv1alpha1.Switch{*o}, ns, k)) > 0 {
				errs = append(errs, field.Duplicate(field.NewPath("spec", "ports").Key(k), fmt.Sprintf(
					"SwitchPort %s/%s is already named by Switch %s/%s", ns, k, o.Namespace, o.Name)))
			}
		}
	}
	return errs
}

// cleanPolicy checks what the Switch's ports become when clean: a provisioning port needs
// a provisioning configuration that names its VLANs, and the parking VLAN must be isolated,
// outside every namespace's SwitchResourceLimit.
func (w SwitchWebhook) cleanPolicy(ctx context.Context, sw *networkv1alpha1.Switch) (field.ErrorList, admission.Warnings, error) {
	var errs field.ErrorList
	var warns admission.Warnings
	limits := &networkv1alpha1.SwitchResourceLimitList{}
	if err := w.Reader.List(ctx, limits); err != nil {
		return nil, nil, err
	}
	type checked struct {
		path   *field.Path
		policy networkv1alpha1.CleanPolicy
	}
	todo := []checked{{field.NewPath("spec", "clean"), switchport.CleanPolicyOf(sw, "")}}
	for _, k := range entryNames(sw) {
		if e := sw.Spec.Ports[k]; e.Clean != nil {
			todo = append(todo, checked{field.NewPath("spec", "ports").Key(k).Child("clean"), switchport.CleanPolicyOf(sw, e.Name)})
		}
	}
	for _, c := range todo {
		if v := c.policy.ParkingVLAN; v != nil {
			// Every port no one configures is an untagged member of VLAN 1 on the network
			// OSes, and junos keeps it in its own "default" object, refusing rackwire's.
			if *v == defaultVLAN {
				errs = append(errs, field.Invalid(c.path.Child("parkingVLAN"), *v,
					"VLAN 1 is the switch's default VLAN, shared by every port that rackwire does not manage (and junos' own 'default' VLAN): park clean ports on an isolated VLAN of their own"))
			}
			for _, l := range limits.Items {
				if allowed, err := vlan.Parse(string(l.Spec.VLANRange)); err == nil && allowed.Contains(int(*v)) {
					errs = append(errs, field.Invalid(c.path.Child("parkingVLAN"), *v, fmt.Sprintf(
						"the parking VLAN must be isolated, but namespace %s's SwitchResourceLimit (%s) lets its tenants use it", l.Namespace, l.Spec.VLANRange)))
				}
			}
		}
		if c.policy.Mode != networkv1alpha1.CleanProvisioning {
			continue
		}
		name := c.policy.ProvisioningConfiguration
		if name == "" {
			errs = append(errs, field.Required(c.path.Child("provisioningConfiguration"), "mode provisioning needs the SwitchPortConfiguration (in the Switch's namespace) that clean ports hold"))
			continue
		}
		cfg := &networkv1alpha1.SwitchPortConfiguration{}
		err := w.Reader.Get(ctx, client.ObjectKey{Namespace: sw.Namespace, Name: name}, cfg)
		switch {
		case apierrors.IsNotFound(err):
			warns = append(warns, fmt.Sprintf("%s: SwitchPortConfiguration %s/%s does not exist yet; ports wait in Cleaning until it does", c.path.Child("provisioningConfiguration"), sw.Namespace, name))
		case err != nil:
			return nil, nil, err
		case !switchport.HasVLANs(&cfg.Spec):
			errs = append(errs, field.Invalid(c.path.Child("provisioningConfiguration"), name, "the configuration names no VLAN (neither untaggedVLAN nor vlans)"))
		default:
			// Like the parking VLAN, the provisioning network is the infra team's: a tenant
			// whose limit holds one of its VLANs would reach every clean host.
			held := vlansOf(&cfg.Spec)
			for _, l := range limits.Items {
				if allowed, err := vlan.Parse(string(l.Spec.VLANRange)); err == nil && allowed.Overlaps(held) {
					errs = append(errs, field.Invalid(c.path.Child("provisioningConfiguration"), name, fmt.Sprintf(
						"the provisioning VLANs must be isolated, but namespace %s's SwitchResourceLimit (%s) lets its tenants use VLANs %s of them", l.Namespace, l.Spec.VLANRange, allowed.Intersect(held))))
				}
			}
		}
	}
	return errs, warns, nil
}

// vlansOf is every VLAN a configuration puts on a port.
func vlansOf(c *networkv1alpha1.SwitchPortConfigurationSpec) vlan.Set {
	s, _ := vlan.Parse(string(c.VLANs))
	if c.UntaggedVLAN != nil {
		s.Add(int(*c.UntaggedVLAN))
	}
	return s
}
