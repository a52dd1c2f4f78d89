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
	"strings"
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
// Admission now refuses VLAN 1 in a limit and in a configuration (a provisioning
// configuration too), naming the field and why.
func TestTenantLimitLeavesOutTheDefaultVLAN(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reader := fake.NewClientBuilder().WithScheme(scheme).Build()
	limit := func(r networkv1alpha1.VLANRange) *networkv1alpha1.SwitchResourceLimit {
		return &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: networkv1alpha1.SwitchResourceLimitName},
			Spec: networkv1alpha1.SwitchResourceLimitSpec{VLANRange: r}}
	}
	refusedAt(t, "a tenant limit holding VLAN 1", (LimitWebhook{Reader: reader}).validate(ctx, limit("1-100")), "spec.vlanRange")
	if err := (LimitWebhook{Reader: reader}).validate(ctx, limit("2-100")); err != nil {
		t.Errorf("a limit without VLAN 1: %v", err)
	}

	cw := ConfigurationWebhook{Reader: reader}
	cfg := func(untagged *networkv1alpha1.VLANID, vlans networkv1alpha1.VLANRange) *networkv1alpha1.SwitchPortConfiguration {
		return &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "provisioning"},
			Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: untagged, VLANs: vlans}}
	}
	_, err := cw.ValidateCreate(ctx, cfg(nil, "1, 5"))
	refusedAt(t, "a configuration tagging VLAN 1", err, "spec.vlans")
	_, err = cw.ValidateCreate(ctx, cfg(ptrTo(networkv1alpha1.VLANID(1)), ""))
	refusedAt(t, "a configuration untagged on VLAN 1", err, "spec.untaggedVLAN")
	if _, err := cw.ValidateCreate(ctx, cfg(ptrTo(networkv1alpha1.VLANID(2)), "5")); err != nil {
		t.Errorf("a configuration without VLAN 1: %v", err)
	}
}

func refusedAt(t *testing.T, what string, err error, path string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Errorf("%s: got %v, want Invalid", what, err)
		return
	}
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		if c.Field == path && strings.Contains(c.Message, "default VLAN") {
			return
		}
	}
	t.Errorf("%s: want a cause on %s saying VLAN 1 is the default VLAN, got %v", what, path, err)
}
