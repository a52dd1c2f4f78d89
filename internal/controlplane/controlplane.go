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

// Package controlplane starts the local Kubernetes control plane that tests, benchmarks and
// `make dev` share: etcd and kube-apiserver on loopback (binaries from KUBEBUILDER_ASSETS,
// built by hack/envtest-bins.sh), every CRD of the repository (ours, the external Cluster
// API ones, and the other projects' kinds under test/crds: BMO's and CAPM3's Metal3Machine) and the webhook configurations that `make manifests` generates, rewritten to
// reach a webhook server on loopback.
package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Dirs are the repository paths the control plane is built from, relative to the root.
var (
	CRDDirs    = []string{"config/crd/bases", "config/crd/external", "test/crds"}
	WebhookDir = "config/webhook"
	// WebhookFiles are the webhook configurations under WebhookDir.
	WebhookFiles = []string{"manifests.yaml", "launcherpod.yaml", "host.yaml", "nodeslicepool.yaml", "claims.yaml"}
	SamplesDir   = "config/samples"
)

// RepoRoot finds the repository root (the directory holding go.mod) from dir upwards, so
// that test packages at any depth find config/.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod found above the working directory")
		}
		dir = parent
	}
}

// New describes a control plane with every CRD and webhook configuration under root.
// Start it with Start on the returned environment; its WebhookInstallOptions then say
// where (host, port, certificate directory) the webhook server must listen.
func New(root string) (*envtest.Environment, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run through make (make test, make dev), " +
			"or export KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh)")
	}
	env := &envtest.Environment{ErrorIfCRDPathMissing: true}
	env.WebhookInstallOptions.LocalServingHost = "127.0.0.1"
	for _, d := range CRDDirs {
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, filepath.Join(root, d))
	}
	// Webhook configurations only exist once an area registers a webhook; until then
	// there is nothing to install.
	// launcherpod.yaml, host.yaml, nodeslicepool.yaml and claims.yaml are written by hand: they need
	// objectSelectors or matchConditions, which controller-gen's marker cannot say.
	for _, f := range WebhookFiles {
		hooks := filepath.Join(root, WebhookDir, f)
		if _, err := os.Stat(hooks); err == nil {
			env.WebhookInstallOptions.Paths = append(env.WebhookInstallOptions.Paths, hooks)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reading webhook configurations: %w", err)
		}
	}
	return env, nil
}
