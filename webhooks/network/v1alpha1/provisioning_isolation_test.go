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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Issue 27, item 10: the parking VLAN was kept out of tenant limits, the provisioning
// network was not: a tenant whose limit held a provisioning VLAN reached every clean host.
// Both the Switch and the limit are refused now, on the field that brings them together.
func TestProvisioningVLANsAreIsolatedFromTenantLimits(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	pxe := &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "pxe"},
		Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptrTo(networkv1alpha1.VLANID(3001)), VLANs: "3100-3101"}}
	parking := networkv1alpha1.VLANID(4000)
	sw := &networkv1alpha1.Switch{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "leaf"},
		Spec: networkv1alpha1.SwitchSpec{
			Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leaf"},
			Clean:    networkv1alpha1.CleanPolicy{Mode: networkv1alpha1.CleanProvisioning, ParkingVLAN: &parking, ProvisioningConfiguration: "pxe"},
		}}
	tenant := &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: networkv1alpha1.SwitchResourceLimitName},
		Spec: networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "3100-3200"}}

	reader := func(objs ...client.Object) client.Reader {
		return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	}
	causeOn := func(err error, path, text string) bool {
		if !apierrors.IsInvalid(err) {
			return false
		}
		for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
			if c.Field == path && strings.Contains(c.Message, text) {
				return true
			}
		}
		return false
	}

	_, err := SwitchWebhook{Reader: reader(pxe, tenant)}.ValidateCreate(context.Background(), sw)
	if !causeOn(err, "spec.clean.provisioningConfiguration", "VLANs 3100-3101") {
		t.Errorf("a Switch provisioning on VLANs a tenant's limit holds: got %v", err)
	}
	err = LimitWebhook{Reader: reader(pxe, sw)}.validate(context.Background(), tenant)
	if !causeOn(err, "spec.vlanRange", "provisioning network of Switch infra/leaf") {
		t.Errorf("a limit holding a Switch's provisioning VLANs: got %v", err)
	}
	tenant.Spec.VLANRange = "100-200"
	if err := (LimitWebhook{Reader: reader(pxe, sw)}).validate(context.Background(), tenant); err != nil {
		t.Errorf("a limit clear of the provisioning VLANs: %v", err)
	}
}
