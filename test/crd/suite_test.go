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

// Package crd proves the generated CRD schemas against a real kube-apiserver: the samples
// are accepted, defaults are applied, and invalid objects are refused with the field path.
package crd

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
)

var (
	root    string
	testEnv *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	ctx     context.Context
)

func TestCRDs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "CRD schema suite")
}

var _ = BeforeSuite(func() {
	ctx = context.Background()
	var err error
	root, err = controlplane.RepoRoot(".")
	Expect(err).NotTo(HaveOccurred())
	testEnv, err = controlplane.New(root)
	Expect(err).NotTo(HaveOccurred())
	// Schemas only: no webhook server runs in this suite, so none may be registered.
	testEnv.WebhookInstallOptions = envtest.WebhookInstallOptions{}
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})
