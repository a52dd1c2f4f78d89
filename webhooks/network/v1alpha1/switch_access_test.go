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

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Issue 27, item 10: a Switch entry could name any namespace, and the Switch reconciler then
// created a SwitchPort there, whether or not the Switch's writer may. The webhook now asks
// the apiserver (a SubjectAccessReview per namespace) whether the writer may create
// SwitchPorts there, and refuses the entry naming the field when not.
func TestSwitchEntriesNeedTheRightToCreateSwitchPortsThere(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var asked []string
	// The apiserver's answer: alice may create SwitchPorts in tenant-a only.
	reviewer := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			sar, ok := obj.(*authorizationv1.SubjectAccessReview)
			if !ok {
				return c.Create(ctx, obj, opts...)
			}
			a := sar.Spec.ResourceAttributes
			asked = append(asked, sar.Spec.User+" "+a.Verb+" "+a.Resource+" in "+a.Namespace)
			sar.Status.Allowed = sar.Spec.User == "alice" && a.Namespace == "tenant-a" && a.Verb == "create" && a.Resource == "switchports" && a.Group == "metal3.io"
			return nil
		},
	}).Build()
	w := SwitchWebhook{Reader: fake.NewClientBuilder().WithScheme(scheme).Build(), Reviewer: reviewer}
	ctx := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UserInfo: authenticationv1.UserInfo{Username: "alice"}}})
	parking := networkv1alpha1.VLANID(4000)
	sw := &networkv1alpha1.Switch{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "leaf"},
		Spec: networkv1alpha1.SwitchSpec{
			Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leaf"},
			Clean:    networkv1alpha1.CleanPolicy{ParkingVLAN: &parking},
			Ports: map[string]networkv1alpha1.PortInfo{
				"a0": {Name: "port0", Namespace: "tenant-a"},
				"b0": {Name: "port1", Namespace: "tenant-b"},
			},
		}}
	_, err := w.ValidateCreate(ctx, sw)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("an entry in a namespace alice may not create SwitchPorts in: got %v, want Invalid", err)
	}
	causes := err.(apierrors.APIStatus).Status().Details.Causes
	if len(causes) != 1 || causes[0].Field != "spec.ports[b0].namespace" || !strings.Contains(causes[0].Message, "tenant-b") {
		t.Fatalf("want one cause on spec.ports[b0].namespace, got %+v", causes)
	}

	// An update that leaves b0 as it was does not ask again for it; moving a0 to tenant-b does.
	old := sw.DeepCopy()
	delete(sw.Spec.Ports, "b0")
	old.Spec.Ports["b0"] = networkv1alpha1.PortInfo{Name: "port1", Namespace: "tenant-b"}
	asked = nil
	if _, err := w.ValidateUpdate(ctx, old, sw); err != nil {
		t.Fatalf("an update leaving alice's allowed entry as it was: %v", err)
	}
	if len(asked) != 0 {
		t.Errorf("entries the update leaves alone were reviewed again: %v", asked)
	}
	moved := sw.DeepCopy()
	moved.Spec.Ports["a0"] = networkv1alpha1.PortInfo{Name: "port0", Namespace: "tenant-b"}
	if _, err := w.ValidateUpdate(ctx, sw, moved); !apierrors.IsInvalid(err) {
		t.Errorf("moving an entry to a namespace alice may not create SwitchPorts in: got %v, want Invalid", err)
	}
}
