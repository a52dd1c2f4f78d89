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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/vlan"
)

// +kubebuilder:webhook:path=/validate-metal3-io-v1alpha1-hostlink,mutating=false,failurePolicy=fail,sideEffects=None,groups=metal3.io,resources=hostlinks,verbs=create;update,versions=v1alpha1,name=vhostlink-v1alpha1.rackwire.metal3.io,admissionReviewVersions=v1

// HostLinkWebhook validates the infra team's wiring of a host.
type HostLinkWebhook struct {
	Reader client.Reader
}

// ValidateCreate checks the wiring.
func (w HostLinkWebhook) ValidateCreate(ctx context.Context, l *networkv1alpha1.HostLink) (admission.Warnings, error) {
	return w.validate(ctx, nil, l)
}

// ValidateUpdate checks the wiring.
func (w HostLinkWebhook) ValidateUpdate(ctx context.Context, old, l *networkv1alpha1.HostLink) (admission.Warnings, error) {
	return w.validate(ctx, old, l)
}

// ValidateDelete allows deletion: the host's ports are released by the controller.
func (HostLinkWebhook) ValidateDelete(context.Context, *networkv1alpha1.HostLink) (admission.Warnings, error) {
	return nil, nil
}

// validate refuses two NICs on one SwitchPort, a SwitchPort another HostLink names (a port
// serves one host), and configurations outside the port's namespace (the infra team's
// configurations live beside the ports); it warns about SwitchPorts and configurations that
// do not exist yet. A port the old object already named is not refused again: two HostLinks
// written before this check must still take their finalizers and status (the controller
// keeps the port with the first host).
func (w HostLinkWebhook) validate(ctx context.Context, old, l *networkv1alpha1.HostLink) (admission.Warnings, error) {
	var errs field.ErrorList
	var warns admission.Warnings
	others, err := w.othersPorts(ctx, l)
	if err != nil {
		return nil, err
	}
	had := map[string]bool{}
	if old != nil {
		for _, p := range old.Spec.Ports {
			ns := p.Port.Namespace
			if ns == "" {
				ns = old.Namespace
			}
			had[ns+"/"+p.Port.Name] = true
		}
	}
	ports := map[string]int{}
	for i, p := range l.Spec.Ports {
		path := field.NewPath("spec", "ports").Index(i)
		ns := p.Port.Namespace
		if ns == "" {
			ns = l.Namespace
		}
		key := ns + "/" + p.Port.Name
		if j, dup := ports[key]; dup {
			errs = append(errs, field.Duplicate(path.Child("port"), fmt.Sprintf("SwitchPort %s is already wired to spec.ports[%d]", key, j)))
			continue
		}
		ports[key] = i
		if other, ok := others[key]; ok && !had[key] {
			errs = append(errs, field.Forbidden(path.Child("port"), fmt.Sprintf("SwitchPort %s is already wired by %s; a SwitchPort serves one host", key, other)))
			continue
		}
		if err := w.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: p.Port.Name}, &networkv1alpha1.SwitchPort{}); apierrors.IsNotFound(err) {
			warns = append(warns, fmt.Sprintf("spec.ports[%d].port: SwitchPort %s does not exist yet", i, key))
		}
		for name, ref := range map[string]*networkv1alpha1.ObjectRef{"provisioningConfiguration": p.ProvisioningConfiguration, "configuration": p.Configuration} {
			if ref == nil {
				continue
			}
			if ref.Namespace != "" && ref.Namespace != ns {
				errs = append(errs, field.Invalid(path.Child(name, "namespace"), ref.Namespace,
					"the infra team's configurations live in the SwitchPort's namespace "+ns+"; tenants' come from their Metal3Machines"))
				continue
			}
			cfg := &networkv1alpha1.SwitchPortConfiguration{}
			err := w.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, cfg)
			switch {
			case apierrors.IsNotFound(err):
				warns = append(warns, fmt.Sprintf("spec.ports[%d].%s: SwitchPortConfiguration %s/%s does not exist yet", i, name, ns, ref.Name))
			case err != nil:
				return nil, err
			case name == "provisioningConfiguration":
				more, err := w.provisioningIsolated(ctx, path.Child(name), ns, cfg)
				if err != nil {
					return nil, err
				}
				errs = append(errs, more...)
			}
		}
	}
	return warns, invalid(kindHostLink, l.Name, errs)
}

// othersPorts are the SwitchPorts the entries of every other HostLink name, "namespace/name",
// each with the entry that names it.
func (w HostLinkWebhook) othersPorts(ctx context.Context, l *networkv1alpha1.HostLink) (map[string]string, error) {
	links := &networkv1alpha1.HostLinkList{}
	if err := w.Reader.List(ctx, links); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range links.Items {
		if o.Namespace == l.Namespace && o.Name == l.Name {
			continue
		}
		for j, p := range o.Spec.Ports {
			ns := p.Port.Namespace
			if ns == "" {
				ns = o.Namespace
			}
			out[ns+"/"+p.Port.Name] = fmt.Sprintf("HostLink %s/%s spec.ports[%d]", o.Namespace, o.Name, j)
		}
	}
	return out, nil
}

// provisioningIsolated refuses a host's provisioning configuration whose VLANs another
// namespace's SwitchResourceLimit lets its tenants use: the host boots on them, so they must
// be isolated, as a Switch's provisioning configuration is (the port's own namespace's limit
// is the one the configuration must fit).
func (w HostLinkWebhook) provisioningIsolated(ctx context.Context, path *field.Path, ns string, cfg *networkv1alpha1.SwitchPortConfiguration) (field.ErrorList, error) {
	limits := &networkv1alpha1.SwitchResourceLimitList{}
	if err := w.Reader.List(ctx, limits); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	held := vlansOf(&cfg.Spec)
	for _, l := range limits.Items {
		if l.Namespace == ns {
			continue
		}
		if allowed, err := vlan.Parse(string(l.Spec.VLANRange)); err == nil && allowed.Overlaps(held) {
			errs = append(errs, field.Invalid(path, cfg.Name, fmt.Sprintf(
				"the provisioning VLANs must be isolated, but namespace %s's SwitchResourceLimit (%s) lets its tenants use VLANs %s of them", l.Namespace, l.Spec.VLANRange, allowed.Intersect(held))))
		}
	}
	return errs, nil
}
