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

// Issue 27, item 8: deleting a namespace's limit cleaned every Active port of the namespace,
// and deleting a linked configuration and creating it again under the same name re-plugged
// every port that links it, around "immutable while linked". Both deletions are refused
// while ports use them, and allowed once none does.
func TestDeletingWhatPortsUseIsRefused(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	web := &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "web"},
		Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptrTo(networkv1alpha1.VLANID(10))}}
	limit := &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: networkv1alpha1.SwitchResourceLimitName},
		Spec: networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "2-100"}}
	port := &networkv1alpha1.SwitchPort{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "p0"},
		Spec: networkv1alpha1.SwitchPortSpec{Configuration: &networkv1alpha1.ConfigurationRef{Name: "web"}}}
	inUse := fake.NewClientBuilder().WithScheme(scheme).WithObjects(web, limit, port).Build()
	ctx := context.Background()

	if _, err := (LimitWebhook{Reader: inUse}).ValidateDelete(ctx, limit); !apierrors.IsForbidden(err) {
		t.Errorf("deleting the limit of a namespace whose port links VLAN 10: got %v, want Forbidden", err)
	}
	if _, err := (ConfigurationWebhook{Reader: inUse}).ValidateDelete(ctx, web); !apierrors.IsForbidden(err) {
		t.Errorf("deleting a configuration a port links: got %v, want Forbidden", err)
	}

	unused := fake.NewClientBuilder().WithScheme(scheme).WithObjects(web, limit).Build()
	if _, err := (LimitWebhook{Reader: unused}).ValidateDelete(ctx, limit); err != nil {
		t.Errorf("deleting the limit of a namespace without ports: %v", err)
	}
	if _, err := (ConfigurationWebhook{Reader: unused}).ValidateDelete(ctx, web); err != nil {
		t.Errorf("deleting a configuration no port links: %v", err)
	}
}
