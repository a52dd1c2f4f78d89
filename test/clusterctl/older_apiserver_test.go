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
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The release components install on a management cluster whose apiserver does not serve the
// MutatingAdmissionPolicy API (Kubernetes before 1.36, or 1.34-1.35 without the feature
// gate): docs/ipam.md promises the claims' webhooks as the fallback there, so nothing of the
// components may need that API. clusterctl init creates every object of the file and fails
// (after its retries) on one whose kind the apiserver does not know; this test applies them
// as TestComponentsApplyServerSide does and needs each to land.
//
// The apiserver here is the envtest one (1.36) with the two policy resources switched off by
// --runtime-config, which is what an older apiserver looks like to a client: no REST mapping.
func TestComponentsApplyWithoutPolicyAPI(t *testing.T) {
	ctx := context.Background()
	objs := renderComponents(ctx, t, nil)

	env := &envtest.Environment{CRDs: certManagerStandIns()}
	env.ControlPlane.GetAPIServer().Configure().Append("runtime-config",
		"admissionregistration.k8s.io/v1/mutatingadmissionpolicies=false,admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings=false")
	// An older apiserver has no such admission plugin either; this one's would wait for the
	// policies it can no longer list.
	env.ControlPlane.GetAPIServer().Configure().Append("disable-admission-plugins", "MutatingAdmissionPolicy")
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

	slices.SortStableFunc(objs, func(a, b unstructured.Unstructured) int { return applyRank(a) - applyRank(b) })
	var failed []string
	for i := range objs {
		o := &objs[i]
		if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("clusterctl-test"), client.ForceOwnership); err != nil {
			failed = append(failed, o.GetKind()+" "+o.GetName()+": "+err.Error())
			continue
		}
		if o.GetKind() == "CustomResourceDefinition" {
			waitEstablished(ctx, t, k8s, o.GetName())
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%d objects of the release components do not apply without the MutatingAdmissionPolicy API:\n%v", len(failed), failed)
	}
}
