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

// Package immutable refuses changes to the spec of objects whose spec is fixed at creation:
// claims and addresses, of both IPAM APIs. The answer names the field and tells the user
// what to do instead.
package immutable

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Spec validates objects of type T whose spec must not change after creation.
type Spec[T client.Object] struct {
	// Kind is reported in the Invalid error.
	Kind schema.GroupKind
	// SpecOf returns the part that must not change.
	SpecOf func(T) any
	// Instead tells the user what to do, e.g. "delete the claim and create a new one".
	Instead string
	// Judges, when set, limits the check to the objects it accepts (those of another
	// provider are left to it); nil judges every object.
	Judges func(T) bool
}

// ValidateCreate allows every creation: only later changes are refused.
func (Spec[T]) ValidateCreate(context.Context, T) (admission.Warnings, error) { return nil, nil }

// ValidateUpdate refuses any change of the spec.
func (v Spec[T]) ValidateUpdate(_ context.Context, old, obj T) (admission.Warnings, error) {
	if v.Judges != nil && !v.Judges(old) {
		return nil, nil
	}
	if equality.Semantic.DeepEqual(v.SpecOf(old), v.SpecOf(obj)) {
		return nil, nil
	}
	return nil, apierrors.NewInvalid(v.Kind, obj.GetName(), field.ErrorList{
		field.Forbidden(field.NewPath("spec"), "is immutable; "+v.Instead),
	})
}

// ValidateDelete allows every deletion: the reconcilers hold back, with finalizers, what
// must not go yet.
func (Spec[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) { return nil, nil }
