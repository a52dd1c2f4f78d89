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
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// secretAccess checks, with a SubjectAccessReview, that whoever writes the AnsibleSwitch may
// read the Secret it names: the manager logs in with that Secret at the address the object
// names, so naming a Secret (or moving the address of an object that names one) hands its
// contents to that address. Updates that change neither are not checked again.
func (w AnsibleSwitchWebhook) secretAccess(ctx context.Context, old, a *networkv1alpha1.AnsibleSwitch) (field.ErrorList, error) {
	if old != nil && old.Spec.CredentialsSecret == a.Spec.CredentialsSecret && DeviceOf(old) == DeviceOf(a) {
		return nil, nil
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("checking who writes AnsibleSwitch %s: %w", a.Name, err)
	}
	u := req.UserInfo
	extra := map[string]authorizationv1.ExtraValue{}
	for key, v := range u.Extra {
		extra[key] = authorizationv1.ExtraValue(v)
	}
	name := a.Spec.CredentialsSecret.Name
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: a.Namespace, Verb: "get", Resource: "secrets", Name: name},
	}}
	if err := w.Reviewer.Create(ctx, sar); err != nil {
		return nil, fmt.Errorf("asking whether %s may read Secret %s/%s: %w", u.Username, a.Namespace, name, err)
	}
	if sar.Status.Allowed {
		return nil, nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "credentialsSecret", "name"), fmt.Sprintf(
		"%s may not read Secret %s in namespace %s; the manager logs in with it at the address this AnsibleSwitch names, so whoever names it (or changes that address) needs that right",
		u.Username, name, a.Namespace))}, nil
}
