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

// Package e2e runs the real thing: the manager binary against the local control plane of
// `make dev`, started and stopped the way a developer does it.
package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rackwire/rackwire/internal/controlplane"
)

var (
	root    string
	manager string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "end-to-end suite")
}

var _ = BeforeSuite(func() {
	var err error
	root, err = controlplane.RepoRoot(".")
	Expect(err).NotTo(HaveOccurred())
	manager = filepath.Join(GinkgoT().TempDir(), "manager")
	build := exec.Command("go", "build", "-o", manager, "./cmd/manager")
	build.Dir = root
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
})
