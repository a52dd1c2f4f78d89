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

package v1alpha1

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Review of issue 27: a tenant limit may hold VLAN 1, the default VLAN of the network OSes,
// of which every port rackwire does not manage is an untagged member (and junos refuses
// rackwire's object for it). A tenant's access port on VLAN 1 shares a VLAN with all of them.
func TestTenantLimitLeavesOutTheDefaultVLAN(t *testing.T) {
	t.Skip("pending: refusing VLAN 1 in limits is a policy change that the suites of other areas (test/e2e, test/bench/switches, this package's limits of \"1-100\") rely on; left for the switch owners to decide")
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	l := &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: networkv1alpha1.SwitchResourceLimitName},
		Spec: networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "1-100"}}
	reader := fake.NewClientBuilder().WithScheme(scheme).Build()
	if err := (LimitWebhook{Reader: reader}).validate(context.Background(), l); !apierrors.IsInvalid(err) {
		t.Errorf("a tenant limit holding VLAN 1: got %v, want Invalid", err)
	}
}
