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

// Review of issue 27: the Switch webhook keeps a provisioning configuration's VLANs out of
// every tenant's limit, but only if the configuration exists when the Switch is written; it
// admits a Switch naming one that does not exist yet ("ports wait in Cleaning until it
// does"), as a `kubectl apply -f` of a directory does. The configuration created after it
// was checked against its own namespace's limit only, so a provisioning network on a tenant's
// VLANs got through, and every clean host's port joined that tenant's VLAN.
func TestProvisioningConfigurationCreatedAfterItsSwitchIsIsolated(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	parking := networkv1alpha1.VLANID(4000)
	sw := &networkv1alpha1.Switch{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "leaf"},
		Spec: networkv1alpha1.SwitchSpec{
			Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leaf"},
			Clean:    networkv1alpha1.CleanPolicy{Mode: networkv1alpha1.CleanProvisioning, ParkingVLAN: &parking, ProvisioningConfiguration: "pxe"},
		}}
	tenant := &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: networkv1alpha1.SwitchResourceLimitName},
		Spec: networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "3100-3200"}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sw, tenant).Build()
	ctx := context.Background()

	if _, err := (SwitchWebhook{Reader: reader}).ValidateCreate(ctx, sw); err != nil {
		t.Fatalf("the Switch, before its provisioning configuration exists: %v", err)
	}
	pxe := &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "pxe"},
		Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptrTo(networkv1alpha1.VLANID(3001)), VLANs: "3100-3101"}}
	_, err := ConfigurationWebhook{Reader: reader}.ValidateCreate(ctx, pxe)
	found := false
	if apierrors.IsInvalid(err) {
		for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
			found = found || (c.Field == "spec" && strings.Contains(c.Message, "3100-3101") && strings.Contains(c.Message, "tenant"))
		}
	}
	if !found {
		t.Errorf("a provisioning configuration on VLANs of namespace tenant's limit, created after its Switch: got %v, want Invalid naming VLANs 3100-3101 and namespace tenant", err)
	}

	pxe.Spec.VLANs = "3300"
	if _, err := (ConfigurationWebhook{Reader: reader}).ValidateCreate(ctx, pxe); err != nil {
		t.Errorf("a provisioning configuration clear of every limit: %v", err)
	}
}
