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

package ipamclaim_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	ipamclaimwebhooks "github.com/rackwire/rackwire/webhooks/ipamclaims/v1alpha1"
	kubevirtwebhooks "github.com/rackwire/rackwire/webhooks/kubevirt/v1"
)

var (
	testEnv *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	ctx     context.Context
	stopMgr func()
)

const (
	timeout  = 60 * time.Second
	interval = 100 * time.Millisecond
	// poolNS is where reservations live, as the manager's --nodeslice-namespace says.
	poolNS = "cni-pools"
	vmNS   = "vms"
)

func TestPersistentIPs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "IPAMClaim allocation, VM claims and launcher-pod webhook suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.Level(zapcore.ErrorLevel)))
	ctx = context.Background()
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)

	root, err := controlplane.RepoRoot(".")
	Expect(err).NotTo(HaveOccurred())
	testEnv, err = controlplane.New(root)
	Expect(err).NotTo(HaveOccurred())
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())
	for _, ns := range []string{poolNS, vmNS, "nets"} {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}

	mgr, err := ctrl.NewManager(cfg, controlplane.ManagerOptions(testEnv))
	Expect(err).NotTo(HaveOccurred())
	// Retries of an hour: every step the tests wait for must be woken by an event (a
	// released reservation, a deleted claim), or the test fails.
	Expect(ipamclaim.SetupWith(mgr, ipamclaim.Options{Namespace: poolNS, ExhaustedRetry: time.Hour, StaleRetry: time.Hour})).To(Succeed())
	Expect(kubevirtwebhooks.Setup(mgr)).To(Succeed())
	Expect(ipamclaimwebhooks.Setup(mgr)).To(Succeed())
	stop, err := controlplane.Run(ctx, mgr, testEnv)
	Expect(err).NotTo(HaveOccurred())
	stopMgr = func() { Expect(stop(60 * time.Second)).To(Succeed()) }
})

var _ = AfterSuite(func() {
	if stopMgr != nil {
		stopMgr()
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})
