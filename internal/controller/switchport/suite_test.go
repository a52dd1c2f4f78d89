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
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switches"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	"github.com/rackwire/rackwire/internal/switchdriver"
	"github.com/rackwire/rackwire/internal/switchdriver/fake"
	networkwebhooks "github.com/rackwire/rackwire/webhooks/network/v1alpha1"
)

var (
	root    string
	testEnv *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	ctx     context.Context
	stopMgr func()
	fakes   *fake.Registry
)

// Generous timeouts: the machine has two slow cores and the apiserver shares them.
const (
	timeout  = 120 * time.Second
	interval = 200 * time.Millisecond
)

// labelUnavailable on an AnsibleSwitch makes the test factory answer as a build without a
// driver does.
const labelUnavailable = "test.rackwire.io/no-driver"

func TestSwitchPorts(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Switch and SwitchPort controllers and webhooks suite")
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
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	cfg.QPS, cfg.Burst = 1000, 2000
	k8s, err = client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())
	fakes = fake.NewRegistry()
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

func testFactory(a *networkv1alpha1.AnsibleSwitch, s *corev1.Secret) (switchdriver.Driver, error) {
	if a.Labels[labelUnavailable] != "" {
		return switchdriver.Unavailable(a, s)
	}
	if a.Spec.Port == 2222 {
		return nil, errors.New("refused by the test")
	}
	return fakes.Factory(a, s)
}

// startManager runs the switches area as cmd/manager wires it, with the fake driver and
// short timings, serving webhooks where the control plane calls them.
func startManager() func() {
	mgr, err := ctrl.NewManager(cfg, controlplane.ManagerOptions(testEnv))
	Expect(err).NotTo(HaveOccurred())
	Expect(switches.SetupWith(mgr, switchport.Options{
		Drivers:       testFactory,
		Window:        200 * time.Millisecond,
		DriverTimeout: 3 * time.Second,
		DriftInterval: 2 * time.Second,
		RetryBase:     200 * time.Millisecond,
		RetryMax:      2 * time.Second,
		// Few workers: no reconcile waits for a switch, so a stalled switch holds none.
		Workers:   4,
		BreakBase: 5 * time.Second,
		BreakMax:  10 * time.Second,
	})).To(Succeed())
	Expect(networkwebhooks.Setup(mgr)).To(Succeed())
	stop, err := controlplane.Run(ctx, mgr, testEnv)
	Expect(err).NotTo(HaveOccurred())
	return func() { Expect(stop(60 * time.Second)).To(Succeed()) }
}
