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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// entryAccess checks, with a SubjectAccessReview per namespace, that whoever writes the Switch
// may create SwitchPorts in each namespace that a new or moved entry names: the Switch
// reconciler creates the SwitchPort there on the writer's behalf, and hands that namespace a
// physical port. Entries the update leaves as they were are not checked again.
func entryAccess(ctx context.Context, reviewer client.Writer, old, sw *networkv1alpha1.Switch) (field.ErrorList, error) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("checking who writes Switch %s: %w", sw.Name, err)
	}
	var errs field.ErrorList
	verdict := map[string]bool{}
	for _, k := range entryNames(sw) {
		ns := sw.Spec.Ports[k].Namespace
		if ns == "" {
			ns = sw.Namespace
		}
		if old != nil {
			if before, ok := old.Spec.Ports[k]; ok && (before.Namespace == sw.Spec.Ports[k].Namespace) {
				continue
			}
		}
		allowed, seen := verdict[ns]
		if !seen {
			u := req.UserInfo
			extra := map[string]authorizationv1.ExtraValue{}
			for key, v := range u.Extra {
				extra[key] = authorizationv1.ExtraValue(v)
			}
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: ns, Verb: "create", Group: networkv1alpha1.GroupVersion.Group, Resource: "switchports",
				},
			}}
			if err := reviewer.Create(ctx, sar); err != nil {
				return nil, fmt.Errorf("asking whether %s may create SwitchPorts in namespace %s: %w", u.Username, ns, err)
			}
			allowed = sar.Status.Allowed
			verdict[ns] = allowed
		}
		if !allowed {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "ports").Key(k).Child("namespace"), fmt.Sprintf(
				"%s may not create SwitchPorts in namespace %s; an entry hands that namespace a physical port, so whoever writes it needs that right there",
				req.UserInfo.Username, ns)))
		}
	}
	return errs, nil
}
