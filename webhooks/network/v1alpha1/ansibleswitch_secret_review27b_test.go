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

// The manager reads, and logs in with, whatever Secret an AnsibleSwitch names in a namespace
// it is granted, and sends it to the address the AnsibleSwitch names. Whoever may write
// AnsibleSwitches there (config/rbac's ansibleswitch-editor-role holds no right on Secrets)
// could name another switch's credentials and point the object at a host of their own: the
// manager would hand them the password. The webhook must ask (a SubjectAccessReview) whether
// the writer may read the Secret named, on create and whenever the Secret or the address
// changes.
func TestAnsibleSwitchNeedsTheRightToReadItsSecret(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := networkv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var asked []string
	// The apiserver's answer: alice may read Secret leaf only; bob no Secret.
	reviewer := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			sar, ok := obj.(*authorizationv1.SubjectAccessReview)
			if !ok {
				return c.Create(ctx, obj, opts...)
			}
			a := sar.Spec.ResourceAttributes
			asked = append(asked, sar.Spec.User+" "+a.Verb+" "+a.Resource+"/"+a.Name+" in "+a.Namespace)
			sar.Status.Allowed = sar.Spec.User == "alice" && a.Namespace == "infra" && a.Verb == "get" &&
				a.Group == "" && a.Resource == "secrets" && a.Name == "leaf"
			return nil
		},
	}).Build()
	w := AnsibleSwitchWebhook{Reader: fake.NewClientBuilder().WithScheme(scheme).Build(), Reviewer: reviewer}
	as := func(user string) context.Context {
		return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UserInfo: authenticationv1.UserInfo{Username: user}}})
	}
	a := &networkv1alpha1.AnsibleSwitch{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "leaf"},
		Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "junos", IP: "10.0.0.9", Port: 22, CredentialsSecret: networkv1alpha1.SecretRef{Name: "spine-admin"}}}
	_, err := w.ValidateCreate(as("bob"), a)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("bob, who may not read Secret spine-admin, names it: got %v, want Invalid (asked %v)", err, asked)
	}
	causes := err.(apierrors.APIStatus).Status().Details.Causes
	if len(causes) != 1 || causes[0].Field != "spec.credentialsSecret.name" || !strings.Contains(causes[0].Message, "bob") {
		t.Fatalf("want one cause on spec.credentialsSecret.name naming bob, got %+v", causes)
	}

	a.Spec.CredentialsSecret.Name = "leaf"
	if _, err := w.ValidateCreate(as("alice"), a); err != nil {
		t.Fatalf("alice, who may read Secret leaf, names it: %v", err)
	}
	// Pointing an AnsibleSwitch at another address sends its Secret there: asked again.
	moved := a.DeepCopy()
	moved.Spec.IP = "192.0.2.66"
	if _, err := w.ValidateUpdate(as("bob"), a, moved); !apierrors.IsInvalid(err) {
		t.Errorf("bob points alice's AnsibleSwitch, and its Secret, at another host: got %v, want Invalid", err)
	}
	// An update that touches neither the Secret nor the address does not ask.
	asked = nil
	touched := a.DeepCopy()
	touched.Labels = map[string]string{"rack": "r1"}
	if _, err := w.ValidateUpdate(as("bob"), a, touched); err != nil || len(asked) != 0 {
		t.Errorf("an update leaving the Secret and the address alone: %v, asked %v", err, asked)
	}
}
