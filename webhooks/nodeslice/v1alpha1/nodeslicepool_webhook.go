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
	"net/netip"
	"strconv"

	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/slicing"
)

// Registered by hand in config/webhook/nodeslicepool.yaml (the manager's own writes skip it).

// ManagerUser is the user rackwire's manager writes as when config/default deploys it: its
// writes skip this webhook (the matchConditions of config/webhook/nodeslicepool.yaml).
const ManagerUser = "system:serviceaccount:rackwire-system:rackwire-controller-manager"

// NodeSlicePoolWebhook checks that a pool's range and slice size can be cut, and that its
// allocations are slices of that cut, each listed once, each node holding at most one.
type NodeSlicePoolWebhook struct{}

var _ admission.Validator[*nodeslicev1alpha1.NodeSlicePool] = NodeSlicePoolWebhook{}

// maxErrors bounds the errors reported for one pool: a wrong slice size makes every
// allocation wrong.
const maxErrors = 20

// ValidateCreate checks a new pool.
func (NodeSlicePoolWebhook) ValidateCreate(_ context.Context, p *nodeslicev1alpha1.NodeSlicePool) (admission.Warnings, error) {
	return nil, validate(p)
}

// ValidateUpdate checks a changed pool (its status is part of the object).
func (NodeSlicePoolWebhook) ValidateUpdate(_ context.Context, _, p *nodeslicev1alpha1.NodeSlicePool) (admission.Warnings, error) {
	return nil, validate(p)
}

// ValidateDelete allows deletion.
func (NodeSlicePoolWebhook) ValidateDelete(context.Context, *nodeslicev1alpha1.NodeSlicePool) (admission.Warnings, error) {
	return nil, nil
}

var kind = nodeslicev1alpha1.GroupVersion.WithKind("NodeSlicePool").GroupKind()

func validate(p *nodeslicev1alpha1.NodeSlicePool) error {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	r, err := netip.ParsePrefix(p.Spec.Range)
	switch {
	case err != nil:
		errs = append(errs, field.Invalid(spec.Child("range"), p.Spec.Range, "not a CIDR such as 10.10.0.0/16 or fd00::/64"))
	case r.Masked() != r:
		// whereabouts' binary and its controller refuse a range that is not its network address.
		errs = append(errs, field.Invalid(spec.Child("range"), p.Spec.Range, "must be the network address, "+r.Masked().String()))
	}
	bits, err := slicing.ParseSliceSize(p.Spec.SliceSize)
	if err != nil {
		errs = append(errs, field.Invalid(spec.Child("sliceSize"), p.Spec.SliceSize, err.Error()))
	}
	if len(errs) > 0 {
		return errors.NewInvalid(kind, p.Name, errs)
	}
	grid, err := slicing.NewGrid(r, bits)
	if err != nil {
		return errors.NewInvalid(kind, p.Name, field.ErrorList{field.Invalid(spec.Child("sliceSize"), p.Spec.SliceSize, err.Error())})
	}
	slices, nodes := map[uint64]int{}, map[string]int{}
	allocs := field.NewPath("status", "allocations")
	for i, a := range p.Status.Allocations {
		if len(errs) >= maxErrors {
			errs = append(errs, field.TooMany(allocs, len(p.Status.Allocations), i))
			break
		}
		path := allocs.Index(i)
		s, err := netip.ParsePrefix(a.SliceRange)
		idx, ok := grid.Index(s)
		switch {
		case err != nil || !ok:
			errs = append(errs, field.Invalid(path.Child("sliceRange"), a.SliceRange, "not a /"+strconv.Itoa(bits)+" slice of "+p.Spec.Range))
		case slices[idx] > 0:
			errs = append(errs, field.Duplicate(path.Child("sliceRange"), a.SliceRange))
		default:
			slices[idx] = i + 1
		}
		if a.NodeName == "" {
			continue
		}
		if msgs := validation.IsDNS1123Subdomain(a.NodeName); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("nodeName"), a.NodeName, msgs[0]))
		} else if first := nodes[a.NodeName]; first > 0 {
			errs = append(errs, field.Invalid(path.Child("nodeName"), a.NodeName, "the node already holds status.allocations["+strconv.Itoa(first-1)+"]"))
		} else {
			nodes[a.NodeName] = i + 1
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.NewInvalid(kind, p.Name, errs)
}
