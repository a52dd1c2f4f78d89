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

package clusterctl

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/controlplane"
)

// serveVars are the clusterctl variables of the areas of the manager's --serve.
var serveVars = map[string]string{
	"ipam":           "RACKWIRE_SERVE_IPAM",
	"switches":       "RACKWIRE_SERVE_SWITCHES",
	"node-slices":    "RACKWIRE_SERVE_NODE_SLICES",
	"persistent-ips": "RACKWIRE_SERVE_PERSISTENT_IPS",
}

// areaOfPath says which area serves a webhook, from the group in its path.
func areaOfPath(path string) string {
	switch {
	case strings.Contains(path, "-ipam-metal3-io-"), strings.Contains(path, "-ipam-cluster-x-k8s-io-"):
		return "ipam"
	case strings.Contains(path, "-whereabouts-cni-cncf-io-"):
		return "node-slices"
	case strings.Contains(path, "-k8s-cni-cncf-io-"), strings.Contains(path, "-kubevirt-io-"):
		return "persistent-ips"
	case strings.Contains(path, "-metal3-io-"):
		return "switches"
	}
	return ""
}

// renderComponents renders the provider's components with vars through clusterctl's library.
func renderComponents(ctx context.Context, t *testing.T, vars map[string]string) []unstructured.Unstructured {
	t.Helper()
	c, err := clusterctl.New(ctx, repo(t, vars))
	if err != nil {
		t.Fatal(err)
	}
	comps, err := c.GetProviderComponents(ctx, "rackwire", clusterctlv1.IPAMProviderType, clusterctl.ComponentsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range serveVars {
		if !slices.Contains(comps.Variables(), v) {
			t.Fatalf("clusterctl lists no variable %s: %v", v, comps.Variables())
		}
	}
	return comps.Objs()
}

// With RACKWIRE_SERVE_IPAM=false the manager is told not to serve IPAM and the apiserver
// never sends an IPAM object to rackwire's webhooks, while it still sends the other areas'
// objects to theirs. Every webhook of the components is gated on its own area's variable.
//
// Stand-in: no manager runs behind the webhook Service (no image, no kubelet, no cluster
// network), so an admission request the apiserver does send fails, and the webhooks that
// fail closed refuse the object, naming the webhook. That refusal is how the test sees a
// webhook being asked; an object admitted by an area's failing-closed webhooks was never sent
// to them.
func TestServeVariablesGateWebhooks(t *testing.T) {
	ctx := context.Background()
	off := renderComponents(ctx, t, map[string]string{"RACKWIRE_SERVE_IPAM": "false"})

	// The manager serves what the variables say.
	for _, o := range off {
		if o.GetKind() != "Deployment" || o.GetName() != "rackwire-controller-manager" {
			continue
		}
		dep := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, dep); err != nil {
			t.Fatal(err)
		}
		want := "--serve=ipam=false,switches=true,node-slices=true,persistent-ips=true"
		if args := dep.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, want) {
			t.Fatalf("manager args %v lack %s", args, want)
		}
	}

	// Each webhook carries one condition, of the area its path belongs to, and the
	// conditions it had before (the launcher pod's) are kept.
	hooks := 0
	for _, o := range off {
		if !strings.HasSuffix(o.GetKind(), "WebhookConfiguration") {
			continue
		}
		webhooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, w := range webhooks {
			hooks++
			wh := w.(map[string]any)
			path, _, _ := unstructured.NestedString(wh, "clientConfig", "service", "path")
			area := areaOfPath(path)
			if area == "" {
				t.Errorf("webhook %s (%s) belongs to no area of --serve", wh["name"], path)
				continue
			}
			conds, _, _ := unstructured.NestedSlice(wh, "matchConditions")
			var ours []string
			for _, c := range conds {
				name, _, _ := unstructured.NestedString(c.(map[string]any), "name")
				if strings.HasPrefix(name, "rackwire-serves-") {
					expr, _, _ := unstructured.NestedString(c.(map[string]any), "expression")
					ours = append(ours, name+": "+expr)
				}
			}
			value := "true"
			if area == "ipam" {
				value = "false"
			}
			want := fmt.Sprintf("rackwire-serves-%s: '%s' == 'true'", area, value)
			if !slices.Equal(ours, []string{want}) {
				t.Errorf("webhook %s (%s): area conditions %q, want [%q]", wh["name"], path, ours, want)
			}
			if path == "/mutate-kubevirt-io-v1-launcher-pod" && len(conds) != 2 {
				t.Errorf("the launcher-pod webhook lost its own condition: %v", conds)
			}
			if path == "/validate-whereabouts-cni-cncf-io-v1alpha1-nodeslicepool" && len(conds) != 2 {
				t.Errorf("the NodeSlicePool webhook lost its own condition (the manager's writes skip it): %v", conds)
			}
		}
	}
	if hooks < 20 {
		t.Fatalf("%d webhooks in the components, expected every one of config/webhook", hooks)
	}

	k8s := startAPIServer(t, nil)
	// The apiserver compiles each matchCondition's CEL when it stores the configuration.
	applyComponents(ctx, t, k8s, off)

	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	sample := func(file, name string) *unstructured.Unstructured {
		objs, err := controlplane.ReadObjects(filepath.Join(root, "config/samples", file))
		if err != nil {
			t.Fatal(err)
		}
		o := objs[0]
		delete(o.Object, "status")
		o.SetNamespace("default")
		o.SetName(name)
		return o
	}
	refusedBy := func(o *unstructured.Unstructured, webhook string) {
		t.Helper()
		err := k8s.Create(ctx, o)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("failed calling webhook %q", webhook)) {
			t.Fatalf("%s %s: %v, want it sent to webhook %s", o.GetKind(), o.GetName(), err, webhook)
		}
	}

	// IPAM is off: an IPPool is admitted, and rackwire's mutating webhook did not add its
	// finalizer (ip-address-manager, if it serves the kind, would add its own).
	pool := sample("ipam_v1alpha1_ippool.yaml", "not-served")
	if err := k8s.Create(ctx, pool); err != nil {
		t.Fatalf("IPAM is not served, yet an IPPool is not admitted: %v", err)
	}
	if len(pool.GetFinalizers()) != 0 {
		t.Fatalf("IPAM is not served, yet the IPPool got finalizers %v", pool.GetFinalizers())
	}
	// The other areas are on: their webhooks are asked.
	refusedBy(sample("metal3_v1alpha1_switch.yaml", "served"), "vswitch-v1alpha1.metal3.io")
	refusedBy(sample("whereabouts_v1alpha1_nodeslicepool.yaml", "served"), "vnodeslicepool-v1alpha1.whereabouts.cni.cncf.io")

	// The same components with IPAM on (the default): now the IPPool goes to its webhook.
	applyComponents(ctx, t, k8s, renderComponents(ctx, t, nil))
	refusedBy(sample("ipam_v1alpha1_ippool.yaml", "served"), "mippool-v1alpha1.ipam.metal3.io")

	// The components carry no claim-finalizer policy (an apiserver without the API would
	// refuse them): a new IPClaim gets no finalizer from the apiserver itself, and the claims'
	// webhook, which stands in, has nothing behind it here. The release's policy file, applied
	// beside the components, puts it on.
	claimFinalized(ctx, t, k8s, false)
	applyComponents(ctx, t, k8s, releasePolicies(t))
	claimFinalized(ctx, t, k8s, true)
}

// releasePolicies are the objects of the release's ipam-claim-finalizer-policy.yaml.
func releasePolicies(t *testing.T) []unstructured.Unstructured {
	t.Helper()
	components, err := release()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := controlplane.ReadObjects(filepath.Join(filepath.Dir(components), "ipam-claim-finalizer-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 4 {
		t.Fatalf("ipam-claim-finalizer-policy.yaml holds %d objects, want the 2 policies and their 2 bindings", len(objs))
	}
	out := make([]unstructured.Unstructured, len(objs))
	for i, o := range objs {
		if o.GetNamespace() != "" {
			t.Fatalf("%s %s carries namespace %q: the policies are cluster-scoped", o.GetKind(), o.GetName(), o.GetNamespace())
		}
		out[i] = *o
	}
	return out
}

// claimFinalized waits until the dry-run create of an IPClaim comes back with rackwire's
// claim finalizer (want) or without it: the apiserver applies a changed admission policy a
// moment after it is stored, not at once.
func claimFinalized(ctx context.Context, t *testing.T, k8s client.Client, want bool) {
	t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		claim := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"pool": map[string]any{"name": "pool"}}}}
		claim.SetAPIVersion("ipam.metal3.io/v1alpha1")
		claim.SetKind("IPClaim")
		claim.SetNamespace("default")
		claim.SetName("claim")
		if err := k8s.Create(ctx, claim, client.DryRunAll); err != nil {
			return false, err
		}
		got = claim.GetFinalizers()
		return slices.Contains(got, "ipclaim.ipam.metal3.io") == want, nil
	})
	if err != nil {
		t.Fatalf("IPAM served %t: a new IPClaim's finalizers stay %v: %v", want, got, err)
	}
}

// applyComponents applies objs server-side, CRDs and Namespaces first, as clusterctl orders them.
func applyComponents(ctx context.Context, t *testing.T, k8s client.Client, objs []unstructured.Unstructured) {
	t.Helper()
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
}
