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

package hostlink_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rackwire/rackwire/internal/controller/hostlink"
	"github.com/rackwire/rackwire/internal/controller/switches"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	"github.com/rackwire/rackwire/internal/switchdriver/fake"
	networkwebhooks "github.com/rackwire/rackwire/webhooks/network/v1alpha1"
)

var (
	testEnv *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	ctx     = context.Background()
	stopMgr func(time.Duration) error
	drivers = fake.NewRegistry()
)

func TestHostLinks(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host-link controller suite")
}

// newerBMO is the control plane's CRDs with a BareMetalHost that keeps spec.networkInterfaces
// and a HostNetworkAttachment kind, as newer BMO releases serve them (v0.13.2 has neither).
func newerBMO(root string) string {
	dir := GinkgoT().TempDir()
	src := filepath.Join(root, "test", "crds")
	entries, err := os.ReadDir(src)
	Expect(err).NotTo(HaveOccurred())
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		Expect(err).NotTo(HaveOccurred())
		if e.Name() == "metal3.io_baremetalhosts.yaml" {
			// The spec's properties are indented eight spaces deeper than "spec:" in BMO's CRD;
			// inserting a sibling of bmc keeps the document valid.
			s := string(b)
			const anchor = "              bmc:\n"
			Expect(s).To(ContainSubstring(anchor))
			s = strings.Replace(s, anchor, "              networkInterfaces:\n"+
				"                type: array\n"+
				"                items:\n"+
				"                  type: object\n"+
				"                  x-kubernetes-preserve-unknown-fields: true\n"+anchor, 1)
			b = []byte(s)
		}
		Expect(os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600)).To(Succeed())
	}
	Expect(os.WriteFile(filepath.Join(dir, "metal3.io_hostnetworkattachments.yaml"), []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: hostnetworkattachments.metal3.io
spec:
  group: metal3.io
  names: {kind: HostNetworkAttachment, listKind: HostNetworkAttachmentList, plural: hostnetworkattachments, singular: hostnetworkattachment}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`), 0o600)).To(Succeed())
	// CAPI's Cluster, as clusterctl installs it, unless the control plane's CRDs have it.
	if _, err := os.Stat(filepath.Join(src, "cluster.x-k8s.io_clusters.yaml")); os.IsNotExist(err) {
		Expect(os.WriteFile(filepath.Join(dir, "cluster.x-k8s.io_clusters.yaml"), []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusters.cluster.x-k8s.io
spec:
  group: cluster.x-k8s.io
  names: {kind: Cluster, listKind: ClusterList, plural: clusters, singular: cluster}
  scope: Namespaced
  versions:
  - name: v1beta2
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`), 0o600)).To(Succeed())
	}
	return dir
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.Level(zapcore.ErrorLevel)))
	SetDefaultEventuallyTimeout(120 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	root, err := controlplane.RepoRoot(".")
	Expect(err).NotTo(HaveOccurred())
	testEnv, err = controlplane.New(root)
	Expect(err).NotTo(HaveOccurred())
	for i, d := range testEnv.CRDDirectoryPaths {
		if strings.HasSuffix(d, filepath.Join("test", "crds")) {
			testEnv.CRDDirectoryPaths[i] = newerBMO(root)
		}
	}
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())

	startManager()
})

// startManager starts the manager (again, after a spec stopped it to play a crash).
func startManager() {
	opts := controlplane.ManagerOptions(testEnv)
	opts.Controller = ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := ctrl.NewManager(cfg, opts)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, switches.SetupWith(mgr, switchport.Options{
		Drivers: drivers.Factory, Window: 100 * time.Millisecond, DriverTimeout: 3 * time.Second,
		DriftInterval: time.Minute, RetryBase: 200 * time.Millisecond, RetryMax: 2 * time.Second,
	})).To(Succeed())
	ExpectWithOffset(1, hostlink.Setup(mgr)).To(Succeed())
	ExpectWithOffset(1, networkwebhooks.Setup(mgr)).To(Succeed())
	stopMgr, err = controlplane.Run(ctx, mgr, testEnv)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
}

var _ = AfterSuite(func() {
	if stopMgr != nil {
		Expect(stopMgr(60 * time.Second)).To(Succeed())
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})
