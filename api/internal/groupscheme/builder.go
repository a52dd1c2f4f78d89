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

// Package groupscheme registers the types of one API group-version with apimachinery alone,
// so that providers such as CAPM3 can import rackwire's API packages without pulling in
// controller-runtime (whose scheme.Builder does the same).
package groupscheme

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Builder collects the types of GroupVersion; each types file calls Register from init.
type Builder struct {
	GroupVersion schema.GroupVersion
	objects      []runtime.Object
}

// Register records types to add.
func (b *Builder) Register(objects ...runtime.Object) {
	b.objects = append(b.objects, objects...)
}

// AddToScheme adds the registered types and the group-version's meta types to s.
func (b *Builder) AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(b.GroupVersion, b.objects...)
	metav1.AddToGroupVersion(s, b.GroupVersion)
	return nil
}
