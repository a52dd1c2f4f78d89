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

package switchport_test

import (
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rackwire/rackwire/internal/controlplane"
)

// ownControlPlane starts a control plane for one test, apart from the suite's: the tests
// that start and stop managers of their own (with other flags) run on it.
func ownControlPlane(t *testing.T) (*envtest.Environment, *rest.Config) {
	t.Helper()
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	env, err := controlplane.New(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env, cfg
}
