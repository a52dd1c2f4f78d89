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
	"testing"

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

	k8s := startAPIServer(t, func(env *envtest.Environment) {
		env.ControlPlane.GetAPIServer().Configure().Append("runtime-config",
			"admissionregistration.k8s.io/v1/mutatingadmissionpolicies=false,admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings=false")
		// An older apiserver has no such admission plugin either; this one's would wait for the
		// policies it can no longer list.
		env.ControlPlane.GetAPIServer().Configure().Append("disable-admission-plugins", "MutatingAdmissionPolicy")
	})

	applyComponents(ctx, t, k8s, objs)
}
