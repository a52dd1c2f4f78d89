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

package ipam_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	capiipamwebhooks "github.com/rackwire/rackwire/webhooks/capiipam/v1beta2"
	ipamwebhooks "github.com/rackwire/rackwire/webhooks/ipam/v1alpha1"
)

var (
	root    string
	testEnv *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	ctx     context.Context
	stopMgr func()
)

// Generous timeouts: the machine has two slow cores and the apiserver shares them.
const (
	timeout  = 120 * time.Second
	interval = 200 * time.Millisecond
)

func TestIPAM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "IPAM controllers and webhooks suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.Level(zapcore.ErrorLevel)))
	ctx = context.Background()
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)

	var err error
	root, err = controlplane.RepoRoot(".")
	Expect(err).NotTo(HaveOccurred())
	testEnv, err = controlplane.New(root)
	Expect(err).NotTo(HaveOccurred())
	// A minimal Cluster CRD, so that tests can pause a cluster.
	testEnv.CRDDirectoryPaths = append(testEnv.CRDDirectoryPaths, filepath.Join("testdata", "crd"))
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	Expect(controlplane.InstallPolicies(ctx, cfg, root)).To(Succeed())
	// The bursts below create thousands of objects; client-go's default 5 QPS would make the
	// test measure the client's rate limiter instead of the operator.
	cfg.QPS, cfg.Burst = 1000, 2000
	k8s, err = client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())
	stopMgr = startManager()
})

var _ = AfterSuite(func() {
	if stopMgr != nil {
		stopMgr()
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// startManager runs a manager with the ipam area (reconcilers and webhooks) as cmd/manager
// wires it, serving webhooks where the control plane calls them. The returned function
// stops it and waits until it has stopped.
func startManager() func() {
	opts := controlplane.ManagerOptions(testEnv)
	// The restart test runs a second manager in this process with the same controllers.
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	opts.NewClient = faults.newClient
	mgr, err := ctrl.NewManager(cfg, opts)
	Expect(err).NotTo(HaveOccurred())
	Expect(ipam.Setup(mgr)).To(Succeed())
	Expect(ipamwebhooks.Setup(mgr)).To(Succeed())
	Expect(capiipamwebhooks.Setup(mgr)).To(Succeed())
	stop, err := controlplane.Run(ctx, mgr, testEnv)
	Expect(err).NotTo(HaveOccurred())
	return func() { Expect(stop(60 * time.Second)).To(Succeed()) }
}

func newNamespace() string {
	ns := &corev1.Namespace{}
	ns.GenerateName = "ipam-"
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func key(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
