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
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/vlan"
)

// +kubebuilder:webhook:path=/validate-metal3-io-v1alpha1-switchresourcelimit,mutating=false,failurePolicy=fail,sideEffects=None,groups=metal3.io,resources=switchresourcelimits,verbs=create;update;delete,versions=v1alpha1,name=vswitchresourcelimit-v1alpha1.metal3.io,admissionReviewVersions=v1

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

// ValidateDelete refuses to delete a limit while ports of its namespace hold or are being
// given VLANs under it: deleted, it would send every such port back to its clean state. The
// namespace's deletion gets through once its SwitchPorts are cleaned and gone (the namespace
// controller retries).
func (w LimitWebhook) ValidateDelete(ctx context.Context, l *networkv1alpha1.SwitchResourceLimit) (admission.Warnings, error) {
	claimed, err := switchport.ClaimedVLANs(ctx, w.Reader, l.Namespace)
	if err != nil || len(claimed) == 0 {
		return nil, err
	}
	var ids vlan.Set
	var who []string
	for id, users := range claimed {
		ids.Add(id)
		who = append(who, users...)
	}
	return nil, apierrors.NewForbidden(networkv1alpha1.GroupVersion.WithResource("switchresourcelimits").GroupResource(), l.Name, fmt.Errorf(
		"VLANs %s of namespace %s's limit are in use or being applied on ports (%s): deleting the limit would clean them all; unlink them first",
		ids, l.Namespace, strings.Join(uniqueSorted(who), ", ")))
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
	errs = append(errs, notDefaultVLAN(path, l.Spec.VLANRange, allowed)...)
	sharedPath := field.NewPath("spec", "sharedVLANRange")
	shared, err := vlan.Parse(string(l.Spec.SharedVLANRange))
	switch {
	case err != nil:
		errs = append(errs, field.Invalid(sharedPath, l.Spec.SharedVLANRange, err.Error()))
	case !shared.SubsetOf(allowed):
		errs = append(errs, field.Invalid(sharedPath, l.Spec.SharedVLANRange, fmt.Sprintf("VLANs %s are not in spec.vlanRange", shared.Difference(allowed))))
	}
	claimed, err := switchport.ClaimedVLANs(ctx, w.Reader, l.Namespace)
	if err != nil {
		return err
	}
	var outside vlan.Set
	var who []string
	for id, users := range claimed {
		if !allowed.Contains(id) {
			outside.Add(id)
			who = append(who, users...)
		}
	}
	if !outside.IsEmpty() {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("VLANs %s are in use or being applied on ports of the namespace (%s); unlink them first",
			outside, strings.Join(uniqueSorted(who), ", "))))
	}
	more, err := w.isolated(ctx, l, allowed, shared)
	if err != nil {
		return err
	}
	return invalid(kindLimit, l.Name, append(errs, more...))
}

// isolated refuses a range that overlaps another namespace's, except on VLANs both limits
// mark as shared, or that holds a Switch's parking VLAN.
func (w LimitWebhook) isolated(ctx context.Context, l *networkv1alpha1.SwitchResourceLimit, allowed, shared vlan.Set) (field.ErrorList, error) {
	var errs field.ErrorList
	path := field.NewPath("spec", "vlanRange")
	limits := &networkv1alpha1.SwitchResourceLimitList{}
	if err := w.Reader.List(ctx, limits); err != nil {
		return nil, err
	}
	for _, o := range limits.Items {
		if o.Namespace == l.Namespace {
			continue
		}
		theirs, err1 := vlan.Parse(string(o.Spec.VLANRange))
		theirShared, err2 := vlan.Parse(string(o.Spec.SharedVLANRange))
		if err1 != nil || err2 != nil {
			continue
		}
		overlap := allowed.Intersect(theirs)
		if bad := overlap.Difference(shared.Intersect(theirShared)); !bad.IsEmpty() {
			errs = append(errs, field.Forbidden(path, fmt.Sprintf(
				"VLANs %s are also in namespace %s's SwitchResourceLimit; namespaces may share VLANs only where both limits list them in spec.sharedVLANRange", bad, o.Namespace)))
		}
	}
	switches := &networkv1alpha1.SwitchList{}
	if err := w.Reader.List(ctx, switches); err != nil {
		return nil, err
	}
	for i := range switches.Items {
		sw := &switches.Items[i]
		parked := []networkv1alpha1.CleanPolicy{switchport.CleanPolicyOf(sw, "")}
		for _, e := range sw.Spec.Ports {
			parked = append(parked, switchport.CleanPolicyOf(sw, e.Name))
		}
		for _, p := range parked {
			if p.ParkingVLAN != nil && allowed.Contains(int(*p.ParkingVLAN)) {
				errs = append(errs, field.Forbidden(path, fmt.Sprintf("VLAN %d is the parking VLAN of Switch %s/%s and must stay isolated", *p.ParkingVLAN, sw.Namespace, sw.Name)))
				break
			}
		}
		seen := map[string]bool{}
		for _, p := range parked {
			name := p.ProvisioningConfiguration
			if p.Mode != networkv1alpha1.CleanProvisioning || name == "" || seen[name] {
				continue
			}
			seen[name] = true
			cfg := &networkv1alpha1.SwitchPortConfiguration{}
			if err := w.Reader.Get(ctx, client.ObjectKey{Namespace: sw.Namespace, Name: name}, cfg); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return nil, err
			}
			if held := vlansOf(&cfg.Spec).Intersect(allowed); !held.IsEmpty() {
				errs = append(errs, field.Forbidden(path, fmt.Sprintf("VLANs %s are the provisioning network of Switch %s/%s (configuration %s) and must stay isolated", held, sw.Namespace, sw.Name, name)))
			}
		}
	}
	return errs, nil
}

func uniqueSorted(in []string) []string {
	sort.Strings(in)
	return slices.Compact(in)
}
