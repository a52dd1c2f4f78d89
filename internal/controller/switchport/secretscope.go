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

package switchport

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AllNamespaces in SecretScope lets the manager read credentials anywhere (a development
// environment that grants Secrets cluster-wide).
const AllNamespaces = "*"

// ErrSecretNamespace is a credentials Secret in a namespace the manager was not granted.
var ErrSecretNamespace = errors.New("the manager is not granted Secrets in this namespace")

// SecretScope reads Secrets only in the namespaces the infra team granted the manager (a
// Role and RoleBinding each, see config/switch-secrets): a Secret elsewhere is refused here,
// before the apiserver would refuse it, so the Switch says what to grant rather than what
// went wrong. Secrets are never listed.
type SecretScope struct {
	Reader client.Reader
	// Namespaces granted; nil or AllNamespaces means every namespace.
	Namespaces []string
}

// Get reads one Secret in a granted namespace.
func (s SecretScope) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if !s.Granted(key.Namespace) {
		return fmt.Errorf("%w (namespace %q)", ErrSecretNamespace, key.Namespace)
	}
	return s.Reader.Get(ctx, key, obj, opts...)
}

// List is refused: the manager holds no right to list Secrets anywhere.
func (s SecretScope) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("the manager never lists Secrets")
}

// Granted says whether Secrets of the namespace may be read.
func (s SecretScope) Granted(namespace string) bool {
	return len(s.Namespaces) == 0 || slices.Contains(s.Namespaces, AllNamespaces) || slices.Contains(s.Namespaces, namespace)
}
