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

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/vlan"
)

// +kubebuilder:webhook:path=/validate-metal3-io-v1alpha1-switch,mutating=false,failurePolicy=fail,sideEffects=None,groups=metal3.io,resources=switches,verbs=create;update,versions=v1alpha1,name=vswitch-v1alpha1.metal3.io,admissionReviewVersions=v1

// SwitchWebhook checks a Switch's ports.
type SwitchWebhook struct{}

var _ admission.Validator[*networkv1alpha1.Switch] = SwitchWebhook{}

// ValidateCreate checks a new Switch.
func (SwitchWebhook) ValidateCreate(_ context.Context, sw *networkv1alpha1.Switch) (admission.Warnings, error) {
	return nil, invalid(kindSwitch, sw.Name, validateSwitch(sw))
}

// ValidateUpdate checks a changed Switch.
func (SwitchWebhook) ValidateUpdate(_ context.Context, _, sw *networkv1alpha1.Switch) (admission.Warnings, error) {
	return nil, invalid(kindSwitch, sw.Name, validateSwitch(sw))
}

// ValidateDelete allows deletion: the Switch's finalizer cleans its ports first.
func (SwitchWebhook) ValidateDelete(context.Context, *networkv1alpha1.Switch) (admission.Warnings, error) {
	return nil, nil
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
	keys := make([]string, 0, len(sw.Spec.Ports))
	for k := range sw.Spec.Ports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	seen := map[string]string{}
	for _, k := range keys {
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
