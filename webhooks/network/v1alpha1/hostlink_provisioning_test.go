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

// Review follow-up: a HostLink's provisioningConfiguration was checked only against the
// infra namespace's own limit, so a host could boot on VLANs a tenant's limit lets that
// tenant use (the gap closed for a Switch's provisioning configuration in a122d06).
func TestHostLinkProvisioningConfigurationStaysOutOfTenantLimits(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	limit := func(ns string, r networkv1alpha1.VLANRange) *networkv1alpha1.SwitchResourceLimit {
		return &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec: networkv1alpha1.SwitchResourceLimitSpec{VLANRange: r}}
	}
	cfg := func(name string, untagged networkv1alpha1.VLANID) *networkv1alpha1.SwitchPortConfiguration {
		return &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name},
			Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptrTo(untagged)}}
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		limit("infra", "300-400"), limit("tenant", "100-199"), cfg("pxe-shared", 150), cfg("pxe", 350)).Build()
	link := func(provisioning string) *networkv1alpha1.HostLink {
		return &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "host-0"},
			Spec: networkv1alpha1.HostLinkSpec{Ports: []networkv1alpha1.HostPort{{MAC: "00:11:22:33:44:55",
				Port: networkv1alpha1.ObjectRef{Name: "port-0"}, ProvisioningConfiguration: &networkv1alpha1.ObjectRef{Name: provisioning}}}}}
	}
	w := HostLinkWebhook{Reader: reader}
	_, err := w.ValidateCreate(context.Background(), link("pxe-shared"))
	if !apierrors.IsInvalid(err) {
		t.Fatalf("a provisioning configuration on a tenant's VLAN 150: got %v, want Invalid", err)
	}
	causes := err.(apierrors.APIStatus).Status().Details.Causes
	if len(causes) != 1 || causes[0].Field != "spec.ports[0].provisioningConfiguration" || !strings.Contains(causes[0].Message, "namespace tenant's SwitchResourceLimit") {
		t.Fatalf("want one cause on spec.ports[0].provisioningConfiguration naming namespace tenant, got %+v", causes)
	}
	if _, err := w.ValidateCreate(context.Background(), link("pxe")); err != nil {
		t.Fatalf("a provisioning configuration inside only the infra namespace's own limit: %v", err)
	}
}
