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
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	capiipamwebhooks "github.com/rackwire/rackwire/webhooks/capiipam/v1beta2"
	ipamwebhooks "github.com/rackwire/rackwire/webhooks/ipam/v1alpha1"
)

// TestWithoutClusterAPI runs the IPAM area against a control plane without the Cluster API
// IPAM CRDs, whose Cluster CRD is served only as v1beta1 (an older Cluster API): Metal3
// claims are served, the metric says the Cluster API half is off, and a paused v1beta1
// Cluster still pauses its claims.
func TestWithoutClusterAPI(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set")
	}
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(2 * time.Minute)
	root, err := controlplane.RepoRoot(".")
	g.Expect(err).NotTo(HaveOccurred())
	env, err := controlplane.New(root)
	g.Expect(err).NotTo(HaveOccurred())
	env.CRDDirectoryPaths = []string{filepath.Join(root, "config/crd/bases"), filepath.Join("testdata", "crd-v1beta1")}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = env.Stop() }()
	g.Expect(controlplane.InstallPolicies(context.Background(), cfg, root)).To(Succeed())

	opts := controlplane.ManagerOptions(env)
	// The suite's manager registered the same controller names in this process.
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := ctrl.NewManager(cfg, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ipam.Setup(mgr)).To(Succeed())
	g.Expect(ipamwebhooks.Setup(mgr)).To(Succeed())
	g.Expect(capiipamwebhooks.Setup(mgr)).To(Succeed())
	ctx := context.Background()
	stop, err := controlplane.Run(ctx, mgr, env)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(stop(time.Minute)).To(Succeed()) }()

	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	g.Expect(err).NotTo(HaveOccurred())
	pool := &ipamv1alpha1.IPPool{}
	pool.Namespace, pool.Name = "default", "no-capi"
	pool.Spec.NamePrefix = "no-capi"
	pool.Spec.Pools = []ipamv1alpha1.Pool{{Subnet: subnet("10.9.0.0/24"), Prefix: 24}}
	g.Expect(c.Create(ctx, pool)).To(Succeed())
	claim := &ipamv1alpha1.IPClaim{}
	claim.Namespace, claim.Name = "default", "m"
	claim.Spec.Pool = corev1.ObjectReference{Name: "no-capi"}
	g.Expect(c.Create(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(claim.Status.Conditions, ipamv1alpha1.ConditionReady)).To(BeTrue(), "%+v", claim.Status)
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
		g.Expect(pool.Status.Usage).To(HaveValue(HaveField("Used", BeEquivalentTo(1))))
	}).Should(Succeed())

	// A claim whose cluster-name label names a paused v1beta1 Cluster waits.
	cluster := &unstructured.Unstructured{}
	cluster.SetAPIVersion("cluster.x-k8s.io/v1beta1")
	cluster.SetKind("Cluster")
	cluster.SetNamespace("default")
	cluster.SetName("old")
	g.Expect(unstructured.SetNestedField(cluster.Object, true, "spec", "paused")).To(Succeed())
	g.Expect(c.Create(ctx, cluster)).To(Succeed())
	paused := &ipamv1alpha1.IPClaim{}
	paused.Namespace, paused.Name = "default", "paused"
	paused.Labels = map[string]string{ipam.ClusterNameLabel: "old"}
	paused.Spec.Pool = corev1.ObjectReference{Name: "no-capi"}
	g.Expect(c.Create(ctx, paused)).To(Succeed())
	// The admission policy put the finalizer on at creation: it cannot read the Cluster.
	g.Expect(paused.Finalizers).To(ConsistOf(ipam.ClaimFinalizer))
	g.Consistently(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(paused), paused)).To(Succeed())
		g.Expect(paused.Status.Address).To(BeNil())
	}, 3*time.Second).Should(Succeed())
	g.Eventually(func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(cluster.Object, false, "spec", "paused"); err != nil {
			return err
		}
		return c.Update(ctx, cluster)
	}).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(paused), paused)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(paused.Status.Conditions, ipamv1alpha1.ConditionReady)).To(BeTrue(), "%+v", paused.Status)
	}).Should(Succeed())

	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var value *float64
	for _, f := range families {
		if f.GetName() == "rackwire_ipam_capi_enabled" {
			value = ptrOf(f.GetMetric()[0].GetGauge().GetValue())
		}
	}
	g.Expect(value).To(HaveValue(BeZero()))
}

func ptrOf(v float64) *float64 { return &v }
