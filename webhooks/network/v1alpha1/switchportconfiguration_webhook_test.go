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

// Issue 27, defect 5: 64 admission-valid rules with wide port ranges rendered 57,600 flows,
// and the run that carried them failed every port of its switch. Now admission refuses
// them, naming spec.acl and the count.
func TestConfigurationRefusesRulesThatRenderTooManyFlows(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	limit := &networkv1alpha1.SwitchResourceLimit{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: networkv1alpha1.SwitchResourceLimitName},
		Spec: networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "2-100"}}
	w := ConfigurationWebhook{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(limit).Build()}
	wide := networkv1alpha1.ACL{Type: "ipv4", Action: "deny", Protocol: "TCP", SrcPortRange: "1-65534", DesPortRange: "1-65534"}
	cfg := &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "wide"},
		Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptrTo(networkv1alpha1.VLANID(10))}}
	for range 64 {
		cfg.Spec.ACL = append(cfg.Spec.ACL, wide)
	}
	_, err := w.ValidateCreate(context.Background(), cfg)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("64 rules of 900 flows each: got %v, want Invalid", err)
	}
	causes := err.(apierrors.APIStatus).Status().Details.Causes
	if len(causes) != 1 || causes[0].Field != "spec.acl" || !strings.Contains(causes[0].Message, "57600 OpenFlow flows") {
		t.Fatalf("want one cause on spec.acl naming 57600 flows, got %+v", causes)
	}
	cfg.Spec.ACL = cfg.Spec.ACL[:2]
	if _, err := w.ValidateCreate(context.Background(), cfg); err != nil {
		t.Fatalf("two wide rules (1800 flows) are within the bound: %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }
