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
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
)

// +kubebuilder:webhook:path=/validate-metal3-io-v1alpha1-switchport,mutating=false,failurePolicy=fail,sideEffects=None,groups=metal3.io,resources=switchports,verbs=create;update,versions=v1alpha1,name=vswitchport-v1alpha1.metal3.io,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// SwitchPortWebhook checks a newly linked configuration against the port and the
// namespace's limit, and keeps tenants to spec.configuration.
//
// A link is the tenant's most frequent write (a MachineDeployment scaling up links a port
// per host), so the webhook reads the manager's cache, through its indexes, rather than ask
// the apiserver three times per link. What it checks is checked again by the state machine
// before and after the switch run, from the cache as it is then: a Switch entry or a limit
// tightened a moment before the link (the cache not showing it yet) stops the port in
// Configuring or cleans it (OutsideLimit), never leaves it holding VLANs outside its limit.
// The same holds for a link admitted while the limit shrinks (two admissions are never
// serialised, cache or not): the limit webhook counts links through the API reader, and
// whichever lands second is caught by the state machine's checks.
type SwitchPortWebhook struct {
	// Reader is the API reader: a configuration or limit created a moment ago, which the
	// cache may not show yet, is looked up there rather than refused.
	Reader client.Reader
	// Client reads from the manager's cache and creates the SubjectAccessReviews that tell
	// a tenant from the infra team.
	Client client.Client
}

var _ admission.Validator[*networkv1alpha1.SwitchPort] = SwitchPortWebhook{}

// ValidateCreate checks a new SwitchPort's link.
func (w SwitchPortWebhook) ValidateCreate(ctx context.Context, port *networkv1alpha1.SwitchPort) (admission.Warnings, error) {
	errs, err := w.validateLink(ctx, port)
	if err != nil {
		return nil, err
	}
	return nil, invalid(kindSwitchPort, port.Name, errs)
}

// ValidateUpdate checks who changes what, and a changed link.
func (w SwitchPortWebhook) ValidateUpdate(ctx context.Context, old, port *networkv1alpha1.SwitchPort) (admission.Warnings, error) {
	if onlyConfiguration(old, port) {
		if equality.Semantic.DeepEqual(old.Spec.Configuration, port.Spec.Configuration) {
			return nil, nil
		}
		errs, err := w.validateLink(ctx, port)
		if err != nil {
			return nil, err
		}
		return nil, invalid(kindSwitchPort, port.Name, errs)
	}
	infra, err := w.mayManagePorts(ctx, port.Namespace)
	if err != nil {
		return nil, err
	}
	if !infra {
		return nil, apierrors.NewForbidden(networkv1alpha1.GroupVersion.WithResource("switchports").GroupResource(), port.Name,
			fmt.Errorf("a tenant may only change spec.configuration of a SwitchPort; labels, annotations, finalizers and owners belong to the infra team and the operator"))
	}
	if equality.Semantic.DeepEqual(old.Spec.Configuration, port.Spec.Configuration) {
		return nil, nil
	}
	errs, err := w.validateLink(ctx, port)
	if err != nil {
		return nil, err
	}
	return nil, invalid(kindSwitchPort, port.Name, errs)
}

// ValidateDelete allows deletion; RBAC keeps tenants from it.
func (SwitchPortWebhook) ValidateDelete(context.Context, *networkv1alpha1.SwitchPort) (admission.Warnings, error) {
	return nil, nil
}

// onlyConfiguration reports whether the update changes nothing but spec.configuration.
func onlyConfiguration(old, port *networkv1alpha1.SwitchPort) bool {
	o, n := old.ObjectMeta, port.ObjectMeta
	return equality.Semantic.DeepEqual(o.Labels, n.Labels) &&
		equality.Semantic.DeepEqual(o.Annotations, n.Annotations) &&
		equality.Semantic.DeepEqual(o.Finalizers, n.Finalizers) &&
		equality.Semantic.DeepEqual(o.OwnerReferences, n.OwnerReferences)
}

// mayManagePorts asks the apiserver whether the requester may create SwitchPorts there,
// which the infra role (and the operator) may and a tenant may not.
func (w SwitchPortWebhook) mayManagePorts(ctx context.Context, namespace string) (bool, error) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return false, err
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range req.UserInfo.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: req.UserInfo.Username, Groups: req.UserInfo.Groups, UID: req.UserInfo.UID, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: "create", Group: networkv1alpha1.GroupVersion.Group, Resource: "switchports",
		},
	}}
	if err := w.Client.Create(ctx, sar); err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// validateLink checks the linked configuration: it exists, it fits the port's entry in its
// Switch and the SwitchResourceLimit of the configuration's namespace, and it comes from the
// port's own namespace unless the port is the infra team's (see switchport.MayLinkAcross).
func (w SwitchPortWebhook) validateLink(ctx context.Context, port *networkv1alpha1.SwitchPort) (field.ErrorList, error) {
	ref := port.Spec.Configuration
	if ref == nil {
		return nil, nil
	}
	path := field.NewPath("spec", "configuration")
	v, _, err := switchport.VouchingEntry(ctx, w.Client, port)
	if err != nil {
		return nil, err
	}
	var sw *networkv1alpha1.Switch
	var entry *networkv1alpha1.PortInfo
	if v != nil {
		sw, entry = v.Switch, &v.Entry
	}
	tenant := switchport.TenantOf(port, ref)
	if tenant != port.Namespace {
		// Only the infra team (or rackwire's host links) may give a host port of its own a
		// tenant's configuration: one who may create SwitchPorts there, on a port in its Switch's namespace.
		infra, err := w.mayManagePorts(ctx, port.Namespace)
		if err != nil {
			return nil, err
		}
		if !infra || !switchport.MayLinkAcross(port, sw) {
			return field.ErrorList{field.Invalid(path.Child("namespace"), ref.Namespace,
				"a SwitchPort may only link a SwitchPortConfiguration of its own namespace "+port.Namespace+
					" (only the infra team links a tenant's configuration, to a host port in its Switch's namespace)")}, nil
		}
	}
	c := &networkv1alpha1.SwitchPortConfiguration{}
	if err := cachedOrFresh(ctx, w.Client, w.Reader, client.ObjectKey{Namespace: tenant, Name: ref.Name}, c); err != nil {
		if apierrors.IsNotFound(err) {
			return field.ErrorList{field.NotFound(path.Child("name"), ref.Name)}, nil
		}
		return nil, err
	}
	os, err := switchOS(ctx, w.Client, sw)
	if err != nil {
		return nil, err
	}
	errs := switchport.FitsPort(path, &c.Spec, entry)
	errs = append(errs, fitsOS(path, c, os)...)
	limit := &networkv1alpha1.SwitchResourceLimit{}
	err = cachedOrFresh(ctx, w.Client, w.Reader, client.ObjectKey{Namespace: tenant, Name: networkv1alpha1.SwitchResourceLimitName}, limit)
	switch {
	case apierrors.IsNotFound(err):
		errs = append(errs, field.Forbidden(path, "namespace "+tenant+" has no SwitchResourceLimit user-limit; ask the infra team for one"))
	case err != nil:
		return nil, err
	default:
		errs = append(errs, switchport.FitsLimit(path, &c.Spec, limit)...)
	}
	return errs, nil
}

// cachedOrFresh reads an object from the cache and, when the cache has none, from the
// apiserver: infra teams create a limit and tenants a configuration just before linking it,
// and a link must not be refused because the cache has yet to show them.
func cachedOrFresh(ctx context.Context, cached, api client.Reader, key client.ObjectKey, obj client.Object) error {
	err := cached.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return api.Get(ctx, key, obj)
	}
	return err
}

// switchOS is the OS of the vouching Switch's AnsibleSwitch ("" when there is no Switch or
// no AnsibleSwitch yet). It comes from the manager's cache: an AnsibleSwitch's OS is set by the
// infra team long before tenants link ports, and the driver refuses what the OS cannot apply
// should the cache lag.
func switchOS(ctx context.Context, cached client.Reader, sw *networkv1alpha1.Switch) (string, error) {
	if sw == nil {
		return "", nil
	}
	a := &networkv1alpha1.AnsibleSwitch{}
	err := cached.Get(ctx, client.ObjectKey{Namespace: sw.Namespace, Name: sw.Spec.Provider.Name}, a)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	}
	return a.Spec.OS, nil
}

// fitsOS refuses what the port's switch OS cannot apply: access rules are rendered for Open
// vSwitch only (OpenFlow); every OS applies VLANs and disabled.
func fitsOS(path *field.Path, c *networkv1alpha1.SwitchPortConfiguration, os string) field.ErrorList {
	if os == "" || os == "openvswitch" || len(c.Spec.ACL) == 0 {
		return nil
	}
	return field.ErrorList{field.Forbidden(path.Child("name"), fmt.Sprintf(
		"SwitchPortConfiguration %s sets spec.acl, but this port's switch runs os %s and rackwire applies access rules on openvswitch only; link a configuration without acl",
		c.Name, os))}
}
