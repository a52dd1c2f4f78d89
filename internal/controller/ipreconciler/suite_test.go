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

package ipreconciler_test

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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler"
	"github.com/rackwire/rackwire/internal/controller/nodeslice"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	ipamclaimwebhooks "github.com/rackwire/rackwire/webhooks/ipamclaims/v1alpha1"
	kubevirtwebhooks "github.com/rackwire/rackwire/webhooks/kubevirt/v1"
	nodeslicewebhooks "github.com/rackwire/rackwire/webhooks/nodeslice/v1alpha1"
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
	// poolNS holds whereabouts' objects, as the manager's --nodeslice-namespace says.
	poolNS = "cni-pools"
	appNS  = "apps"
	netNS  = "nets"
	// grace is the suite's --ip-reconciler-grace: short, since every reap waits for it.
	grace = 2 * time.Second
	// node is where the suite's pods run.
	node = "worker-1"
)

func TestIPReconciler(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "IP reconciler suite")
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
	for _, ns := range []string{poolNS, appNS, netNS} {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	Expect(k8s.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}})).To(Succeed())

	opts := controlplane.ManagerOptions(testEnv)
	ipreconciler.CacheOptions(&opts.Cache)
	mgr, err := ctrl.NewManager(cfg, opts)
	Expect(err).NotTo(HaveOccurred())
	// The resync is short too: a reap that waits for the grace is woken by it.
	Expect(ipreconciler.SetupWith(mgr, ipreconciler.Options{Namespace: poolNS, Grace: grace, Resync: 500 * time.Millisecond, Skew: ipreconciler.Skew})).To(Succeed())
	// The controllers beside it in the manager: slices freed by reaping, claims whose
	// reservations must stay.
	Expect(nodeslice.SetupWith(mgr, nodeslice.Options{Namespace: poolNS, ReleaseGrace: time.Second, WriteInterval: 100 * time.Millisecond})).To(Succeed())
	Expect(ipamclaim.SetupWith(mgr, ipamclaim.Options{Namespace: poolNS, ExhaustedRetry: time.Hour, StaleRetry: time.Hour})).To(Succeed())
	// The webhooks the control plane sends these objects to.
	Expect(nodeslicewebhooks.Setup(mgr)).To(Succeed())
	Expect(ipamclaimwebhooks.Setup(mgr)).To(Succeed())
	Expect(kubevirtwebhooks.Setup(mgr)).To(Succeed())
	stop, err := controlplane.Run(ctx, mgr, testEnv)
	Expect(err).NotTo(HaveOccurred())
	stopMgr = func() { Expect(stop(60 * time.Second)).To(Succeed()) }
})

// trustingReconciler runs, beside the suite's manager (which trusts no network-status, as
// the manager's default), a second IP reconciler that trusts it, as one started with
// --ip-reconciler-trust-network-status; the returned func stops it.
func trustingReconciler() func() {
	opts := ctrl.Options{
		Scheme: scheme.New(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		// The suite's manager registered the controller names already.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	ipreconciler.CacheOptions(&opts.Cache)
	mgr, err := ctrl.NewManager(cfg, opts)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, ipreconciler.SetupWith(mgr, ipreconciler.Options{
		Namespace: poolNS, Grace: grace, Resync: 500 * time.Millisecond, Skew: ipreconciler.Skew, TrustNetworkStatus: true,
	})).To(Succeed())
	stop, err := controlplane.Run(ctx, mgr, testEnv)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return func() { ExpectWithOffset(1, stop(60*time.Second)).To(Succeed()) }
}

var _ = AfterSuite(func() {
	if stopMgr != nil {
		stopMgr()
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})
