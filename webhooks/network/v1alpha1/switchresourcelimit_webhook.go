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

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/vlan"
)

// +kubebuilder:webhook:path=/validate-metal3-io-v1alpha1-switchresourcelimit,mutating=false,failurePolicy=fail,sideEffects=None,groups=metal3.io,resources=switchresourcelimits,verbs=create;update,versions=v1alpha1,name=vswitchresourcelimit-v1alpha1.metal3.io,admissionReviewVersions=v1

// LimitWebhook checks a SwitchResourceLimit: its name, its range, and that it does not
// shrink below the VLANs the namespace's ports hold.
type LimitWebhook struct {
	Reader client.Reader
}

var _ admission.Validator[*networkv1alpha1.SwitchResourceLimit] = LimitWebhook{}

// ValidateCreate checks a new limit.
func (w LimitWebhook) ValidateCreate(ctx context.Context, l *networkv1alpha1.SwitchResourceLimit) (admission.Warnings, error) {
	return nil, w.validate(ctx, l)
}

// ValidateUpdate checks a changed limit.
func (w LimitWebhook) ValidateUpdate(ctx context.Context, _, l *networkv1alpha1.SwitchResourceLimit) (admission.Warnings, error) {
	return nil, w.validate(ctx, l)
}

// ValidateDelete allows deletion: ports then refuse new links in the namespace.
func (LimitWebhook) ValidateDelete(context.Context, *networkv1alpha1.SwitchResourceLimit) (admission.Warnings, error) {
	return nil, nil
}

func (w LimitWebhook) validate(ctx context.Context, l *networkv1alpha1.SwitchResourceLimit) error {
	var errs field.ErrorList
	if l.Name != networkv1alpha1.SwitchResourceLimitName {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), l.Name, "must be user-limit: there is one SwitchResourceLimit per namespace"))
	}
	path := field.NewPath("spec", "vlanRange")
	allowed, err := vlan.Parse(string(l.Spec.VLANRange))
	if err != nil {
		errs = append(errs, field.Invalid(path, l.Spec.VLANRange, err.Error()))
		return invalid(kindLimit, l.Name, errs)
	}
	used, err := switchport.UsedVLANs(ctx, w.Reader, l.Namespace)
	if err != nil {
		return err
	}
	if extra := used.Difference(allowed); !extra.IsEmpty() {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("VLANs %s are in use on ports of the namespace; unlink them first", extra)))
	}
	return invalid(kindLimit, l.Name, errs)
}
