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

package devenv

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/controlplane"
)

// fieldOwner is the server-side apply owner of what devenv applies.
const fieldOwner = "rackwire-devenv"

// applyFile server-side applies the objects of a YAML file or directory; namespaced
// objects without a namespace go to ns; edit, if any, may change each object first. It
// returns how many objects it applied.
func applyFile(ctx context.Context, c client.Client, path, ns string, edit ...func(*unstructured.Unstructured) error) (int, error) {
	objs, err := controlplane.ReadObjects(path)
	if err != nil {
		return 0, err
	}
	for _, obj := range objs {
		namespaced, err := c.IsObjectNamespaced(obj)
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if namespaced && obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
		}
		for _, f := range edit {
			if err := f(obj); err != nil {
				return 0, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return 0, fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return len(objs), nil
}
