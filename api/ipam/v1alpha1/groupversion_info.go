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

// Package v1alpha1 holds the ipam.metal3.io types. They keep the wire format of Metal3's
// ip-address-manager so that CAPM3 can use rackwire as a drop-in replacement.
// +kubebuilder:object:generate=true
// +groupName=ipam.metal3.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rackwire/rackwire/api/internal/groupscheme"
)

var (
	// GroupVersion is group version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "ipam.metal3.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this group-version.
	SchemeBuilder = &groupscheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
