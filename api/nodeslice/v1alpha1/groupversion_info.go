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

// Package v1alpha1 holds the whereabouts.cni.cncf.io types: byte for byte the wire format of
// whereabouts v0.9.4 (field names, JSON, object names, no status subresource), so that the
// whereabouts CNI binary and its tools work unchanged on what rackwire writes, and rackwire
// on what they write. Additions are optional fields whereabouts ignores.
// +kubebuilder:object:generate=true
// +groupName=whereabouts.cni.cncf.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rackwire/rackwire/api/internal/groupscheme"
)

var (
	// GroupVersion is group version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "whereabouts.cni.cncf.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this group-version.
	SchemeBuilder = &groupscheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
