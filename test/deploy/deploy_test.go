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

// Package deploy renders the kustomize configurations users deploy, with the pinned
// kustomize, and applies them server-side to a real kube-apiserver, so a broken manifest
// fails here rather than in a user's cluster.
package deploy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rackwire/rackwire/internal/controlplane"
)

// kustomizeVersion is the Makefile's KUSTOMIZE_VERSION; `make kustomize` builds it.
const kustomizeVersion = "v5.8.2"

// configs are what a user applies, in order: the operator, then the monitoring pieces.
var configs = []string{"config/default", "config/prometheus", "config/grafana"}

func TestRenderedManifestsApply(t *testing.T) {
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	kustomize := filepath.Join(root, "bin", "kustomize-"+kustomizeVersion)
	if _, err := os.Stat(kustomize); err != nil {
		t.Fatalf("the pinned kustomize is missing (run `make kustomize`): %v", err)
	}

	env := &envtest.Environment{CRDDirectoryPaths: []string{"testdata/crds"}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	var all []*unstructured.Unstructured
	for _, dir := range configs {
		objs := render(t, kustomize, root, dir)
		if len(objs) == 0 {
			t.Fatalf("%s renders nothing", dir)
		}
		apply(ctx, t, c, dir, objs)
		all = append(all, objs...)
	}
	checkReferences(t, all)
	t.Run("the CNI plugin's identity", func(t *testing.T) { checkCNIPermissions(ctx, t, cfg, c) })
	t.Run("the manager's Secrets", func(t *testing.T) { checkManagerSecrets(ctx, t, cfg, c, kustomize, root) })
	t.Run("the network-status policy", func(t *testing.T) { checkNetworkStatusPolicy(ctx, t, cfg, c) })
}

// render runs `kustomize build dir` and reads its objects.
func render(t *testing.T, kustomize, root, dir string) []*unstructured.Unstructured {
	t.Helper()
	return renderAbs(t, kustomize, filepath.Join(root, dir))
}

// renderAbs is render of a directory named by its full path.
func renderAbs(t *testing.T, kustomize, dir string) []*unstructured.Unstructured {
	t.Helper()
	out, err := exec.Command(kustomize, "build", dir).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok { //nolint:errorlint // Output returns it unwrapped
			msg = string(ee.Stderr)
		}
		t.Fatalf("kustomize build %s: %s", dir, msg)
	}
	file := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
	objs, err := controlplane.ReadObjects(file)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return objs
}

// apply applies the CRDs and Namespaces first and waits for the CRDs to be served, then
// everything else. Server-side apply refuses fields the schema does not declare.
func apply(ctx context.Context, t *testing.T, c client.Client, dir string, objs []*unstructured.Unstructured) {
	t.Helper()
	first := func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "CustomResourceDefinition" || o.GetKind() == "Namespace"
	}
	for _, early := range []bool{true, false} {
		for _, o := range objs {
			if first(o) != early {
				continue
			}
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("deploy-test"), client.ForceOwnership); err != nil {
				t.Fatalf("%s: applying %s %s/%s: %v", dir, o.GetKind(), o.GetNamespace(), o.GetName(), err)
			}
		}
		if early {
			for _, o := range objs {
				if o.GetKind() == "CustomResourceDefinition" {
					waitEstablished(ctx, t, c, o.GetName())
				}
			}
		}
	}
	t.Logf("%s: %d objects applied", dir, len(objs))
}

func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", name, err)
	}
}

// checkReferences finds what the apiserver accepts but a cluster cannot run: a workload
// whose ServiceAccount, Secret or ConfigMap volume is not deployed, a binding of a role that
// is not, a Service that selects no workload, a ServiceMonitor that selects no Service.
func checkReferences(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	has := map[string]bool{}
	for _, o := range objs {
		has[key(o.GetKind(), o.GetNamespace(), o.GetName())] = true
	}
	certSecrets := map[string]bool{}
	var podLabels []map[string]string
	for _, o := range objs {
		if o.GetKind() == "Certificate" {
			s, _, _ := unstructured.NestedString(o.Object, "spec", "secretName")
			certSecrets[key("Secret", o.GetNamespace(), s)] = true
		}
	}
	for _, o := range objs {
		ns := o.GetNamespace()
		switch o.GetKind() {
		case "Deployment", "DaemonSet":
			sa, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
			if !has[key("ServiceAccount", ns, sa)] {
				t.Errorf("%s %s runs as ServiceAccount %q, which is not deployed", o.GetKind(), o.GetName(), sa)
			}
			labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
			podLabels = append(podLabels, labels)
			vols, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
			for _, v := range vols {
				vm, _ := v.(map[string]any)
				if s, ok, _ := unstructured.NestedString(vm, "secret", "secretName"); ok && !certSecrets[key("Secret", ns, s)] && !has[key("Secret", ns, s)] {
					t.Errorf("%s %s mounts Secret %q, which nothing deploys or issues", o.GetKind(), o.GetName(), s)
				}
				if s, ok, _ := unstructured.NestedString(vm, "configMap", "name"); ok && !has[key("ConfigMap", ns, s)] {
					t.Errorf("%s %s mounts ConfigMap %q, which is not deployed", o.GetKind(), o.GetName(), s)
				}
			}
		case "ClusterRoleBinding", "RoleBinding":
			kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
			name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
			roleNS := ns
			if kind == "ClusterRole" {
				roleNS = ""
			}
			if !has[key(kind, roleNS, name)] {
				t.Errorf("%s %s binds %s %q, which is not deployed", o.GetKind(), o.GetName(), kind, name)
			}
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				sm, _ := s.(map[string]any)
				if sm["kind"] == "ServiceAccount" && !has[key("ServiceAccount", fmt.Sprint(sm["namespace"]), fmt.Sprint(sm["name"]))] {
					t.Errorf("%s %s binds ServiceAccount %v/%v, which is not deployed", o.GetKind(), o.GetName(), sm["namespace"], sm["name"])
				}
			}
		}
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "Service":
			sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
			if !slices.ContainsFunc(podLabels, func(l map[string]string) bool { return matches(sel, l) }) {
				t.Errorf("Service %s selects no deployed workload (%v)", o.GetName(), sel)
			}
		case "ServiceMonitor":
			sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
			found := false
			for _, s := range objs {
				found = found || (s.GetKind() == "Service" && s.GetNamespace() == o.GetNamespace() && matches(sel, s.GetLabels()))
			}
			if !found {
				t.Errorf("ServiceMonitor %s selects no Service in %s (%v)", o.GetName(), o.GetNamespace(), sel)
			}
		}
	}
}

func key(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
