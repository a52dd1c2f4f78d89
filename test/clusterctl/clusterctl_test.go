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

// Package clusterctl checks the release artifacts of `make release-manifests` the way a Cluster
// API user meets them: through clusterctl's own library, reading a local file repository, and
// applied to a real kube-apiserver.
package clusterctl

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rackwire/rackwire/internal/controlplane"
)

const version = "v0.3.1"

// releaseBase is the repository's directory, removed by TestMain.
var releaseBase string

// release runs `make release-manifests` once into a clusterctl file repository,
// {base}/ipam-rackwire/{release}/, and returns the components file.
var release = sync.OnceValues(func() (string, error) {
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		return "", err
	}
	base, err := os.MkdirTemp("", "rackwire-clusterctl-")
	if err != nil {
		return "", err
	}
	releaseBase = base
	dir := filepath.Join(base, "ipam-rackwire", version)
	make := exec.Command("make", "--no-print-directory", "-C", root, "release-manifests", "RELEASE_VERSION="+version, "RELEASE_DIR="+dir)
	if out, err := make.CombinedOutput(); err != nil {
		return "", fmt.Errorf("make release-manifests: %w\n%s", err, out)
	}
	return filepath.Join(dir, "ipam-components.yaml"), nil
})

// repo writes a clusterctl config file that names the provider in the release repository
// and sets vars; it returns the config file.
func repo(t *testing.T, vars map[string]string) string {
	t.Helper()
	components, err := release()
	if err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "providers:\n- name: rackwire\n  type: IPAMProvider\n  url: file://%s\n", components)
	for k, v := range vars {
		fmt.Fprintf(&cfg, "%s: %q\n", k, v)
	}
	path := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The provider is found in the file repository as an IPAM provider, its metadata names the
// release series and the v1beta2 contract, and its variables are listed with their defaults.
func TestProviderAndVariables(t *testing.T) {
	ctx := context.Background()
	cfgPath := repo(t, nil)
	c, err := clusterctl.New(ctx, cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	providers, err := c.GetProvidersConfig()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(providers, func(p clusterctl.Provider) bool {
		return p.Name() == "rackwire" && p.Type() == clusterctlv1.IPAMProviderType
	})
	if i < 0 {
		t.Fatalf("no IPAM provider rackwire among clusterctl's providers")
	}
	if got := providers[i].ManifestLabel(); got != "ipam-rackwire" {
		t.Fatalf("manifest label %q, want ipam-rackwire", got)
	}

	cfg, err := config.New(ctx, cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	r, err := repository.New(ctx, providers[i], cfg)
	if err != nil {
		t.Fatal(err)
	}
	md, err := r.Metadata(version).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	series := md.GetReleaseSeriesForVersion(mustSemver(t, version))
	if series == nil || series.Contract != "v1beta2" {
		t.Fatalf("release series for %s: %+v, want contract v1beta2", version, series)
	}

	comps, err := c.GetProviderComponents(ctx, "rackwire", clusterctlv1.IPAMProviderType, clusterctl.ComponentsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"RACKWIRE_IMAGE", "RACKWIRE_LEADER_ELECT", "RACKWIRE_LOG_LEVEL", "RACKWIRE_NAMESPACE", "RACKWIRE_SERVE_IPAM", "RACKWIRE_SERVE_NODE_SLICES", "RACKWIRE_SERVE_PERSISTENT_IPS", "RACKWIRE_SERVE_SWITCHES"}
	got := slices.Sorted(slices.Values(comps.Variables()))
	if !slices.Equal(got, want) {
		t.Fatalf("variables %v, want %v", got, want)
	}
	// Unset, each takes its default.
	if comps.TargetNamespace() != "rackwire-system" {
		t.Fatalf("target namespace %q, want rackwire-system", comps.TargetNamespace())
	}
	// The manager's Deployment and the CNI plugin's DaemonSet run the same image.
	if imgs := slices.Compact(comps.Images()); !slices.Equal(imgs, []string{"ghcr.io/rackwire/rackwire:" + version}) {
		t.Fatalf("images %v", imgs)
	}
}

// Variables set in clusterctl's config are substituted, and every object of the components
// applies server-side to a kube-apiserver; the Deployment the apiserver stores runs the
// image, namespace, log level and leader election asked for.
//
// Stand-ins: cert-manager is not installed here, so its Certificate and Issuer kinds are
// served by schema-less CRDs (nothing issues the certificate); no kubelet runs, so the image
// is never pulled.
func TestComponentsApplyServerSide(t *testing.T) {
	ctx := context.Background()
	cfgPath := repo(t, map[string]string{
		"RACKWIRE_IMAGE":        "registry.example/rackwire:test",
		"RACKWIRE_NAMESPACE":    "ipam-system",
		"RACKWIRE_LOG_LEVEL":    "debug",
		"RACKWIRE_LEADER_ELECT": "false",
	})
	c, err := clusterctl.New(ctx, cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	comps, err := c.GetProviderComponents(ctx, "rackwire", clusterctlv1.IPAMProviderType, clusterctl.ComponentsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if comps.TargetNamespace() != "ipam-system" {
		t.Fatalf("target namespace %q, want ipam-system", comps.TargetNamespace())
	}

	k8s := startAPIServer(t, nil)

	objs := comps.Objs()
	// CRDs and Namespaces first, as clusterctl orders them.
	slices.SortStableFunc(objs, func(a, b unstructured.Unstructured) int { return applyRank(a) - applyRank(b) })
	for i := range objs {
		o := &objs[i]
		if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("clusterctl-test"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
		if o.GetKind() == "CustomResourceDefinition" {
			waitEstablished(ctx, t, k8s, o.GetName())
		}
	}

	dep := &appsv1.Deployment{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "ipam-system", Name: "rackwire-controller-manager"}, dep); err != nil {
		t.Fatal(err)
	}
	mgr := dep.Spec.Template.Spec.Containers[0]
	if mgr.Image != "registry.example/rackwire:test" {
		t.Fatalf("image %q", mgr.Image)
	}
	for _, arg := range []string{"--leader-elect=false", "--zap-log-level=debug"} {
		if !slices.Contains(mgr.Args, arg) {
			t.Fatalf("manager args %v lack %s", mgr.Args, arg)
		}
	}
	// clusterctl's own labels, which `clusterctl move` and `delete` find the provider by.
	if dep.Labels[clusterctlv1.ClusterctlLabel] != "" || dep.Labels[clusterv1.ProviderNameLabel] != "ipam-rackwire" {
		t.Fatalf("deployment labels %v", dep.Labels)
	}
	if _, ok := dep.Labels[clusterctlv1.ClusterctlLabel]; !ok {
		t.Fatalf("deployment lacks the %s label: %v", clusterctlv1.ClusterctlLabel, dep.Labels)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "ippools.ipam.metal3.io"}, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Labels[clusterv1.ProviderNameLabel] != "ipam-rackwire" {
		t.Fatalf("IPPool CRD labels %v", crd.Labels)
	}
	for _, o := range objs {
		if strings.Contains(fmt.Sprint(o.Object), "rackwire-system") {
			t.Fatalf("%s %s still names rackwire-system", o.GetKind(), o.GetName())
		}
	}
}

func applyRank(o unstructured.Unstructured) int {
	switch o.GetKind() {
	case "CustomResourceDefinition":
		return 0
	case "Namespace":
		return 1
	}
	return 2
}

func waitEstablished(ctx context.Context, t *testing.T, k8s client.Client, name string) {
	t.Helper()
	for range 600 {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		{
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return
				}
			}
		}
		sleep()
	}
	t.Fatalf("CRD %s never established", name)
}

// certManagerStandIns serve cert-manager.io/v1 Certificate and Issuer without a schema.
func certManagerStandIns() []*apiextensionsv1.CustomResourceDefinition {
	preserve := true
	crd := func(kind, plural string) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".cert-manager.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "cert-manager.io",
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
				Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: &preserve,
					}},
				}},
			},
		}
	}
	return []*apiextensionsv1.CustomResourceDefinition{crd("Certificate", "certificates"), crd("Issuer", "issuers")}
}

// startAPIServer starts a control plane with cert-manager's stand-in CRDs, configured by
// configure when it is not nil, and returns a client of it.
func startAPIServer(t *testing.T, configure func(*envtest.Environment)) client.Client {
	t.Helper()
	env := &envtest.Environment{CRDs: certManagerStandIns()}
	if configure != nil {
		configure(env)
	}
	restCfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	k8s, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return k8s
}
