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

// Review of issue 27: VLAN 1 is every network OS's default VLAN: each port that rackwire does
// not manage (uplinks, management, unused ports) is an untagged member of it, and junos
// holds it in its own "default" VLAN object, so rackwire-1 fails every commit that creates
// it. A Switch parked its clean ports there: far from isolated, and on junos every clean
// failed. The Switch webhook admitted it, Switch-wide and per port.
func TestParkingVLANIsNotTheDefaultVLAN(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	one, parking := networkv1alpha1.VLANID(1), networkv1alpha1.VLANID(4000)
	reader := fake.NewClientBuilder().WithScheme(scheme).Build()
	causeOn := func(err error, path string) bool {
		if !apierrors.IsInvalid(err) {
			return false
		}
		for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
			if c.Field == path && strings.Contains(c.Message, "VLAN 1") {
				return true
			}
		}
		return false
	}
	sw := &networkv1alpha1.Switch{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "leaf"},
		Spec: networkv1alpha1.SwitchSpec{
			Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leaf"},
			Clean:    networkv1alpha1.CleanPolicy{ParkingVLAN: &one},
		}}
	if _, err := (SwitchWebhook{Reader: reader}).ValidateCreate(context.Background(), sw); !causeOn(err, "spec.clean.parkingVLAN") {
		t.Errorf("a Switch parking its ports on VLAN 1: got %v, want Invalid on spec.clean.parkingVLAN", err)
	}
	sw.Spec.Clean.ParkingVLAN = &parking
	sw.Spec.Ports = map[string]networkv1alpha1.PortInfo{"p0": {Name: "swp1", Clean: &networkv1alpha1.CleanPolicy{ParkingVLAN: &one}}}
	if _, err := (SwitchWebhook{Reader: reader}).ValidateCreate(context.Background(), sw); !causeOn(err, "spec.ports[p0].clean.parkingVLAN") {
		t.Errorf("a port parked on VLAN 1: got %v, want Invalid on spec.ports[p0].clean.parkingVLAN", err)
	}
	sw.Spec.Ports = nil
	if _, err := (SwitchWebhook{Reader: reader}).ValidateCreate(context.Background(), sw); err != nil {
		t.Errorf("a Switch parking on VLAN 4000: %v", err)
	}
}
