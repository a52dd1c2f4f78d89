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
	"net"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/vlan"
)

// +kubebuilder:webhook:path=/validate-metal3-io-v1alpha1-switchportconfiguration,mutating=false,failurePolicy=fail,sideEffects=None,groups=metal3.io,resources=switchportconfigurations,verbs=create;update,versions=v1alpha1,name=vswitchportconfiguration-v1alpha1.metal3.io,admissionReviewVersions=v1

// ConfigurationWebhook checks a SwitchPortConfiguration: VLANs, ACLs, the namespace's
// limit, and, for an edit, every port that links it (an edit reconfigures those ports in
// place, so it must still fit them).
type ConfigurationWebhook struct {
	Reader client.Reader
}

var _ admission.Validator[*networkv1alpha1.SwitchPortConfiguration] = ConfigurationWebhook{}

// ValidateCreate checks a new configuration.
func (w ConfigurationWebhook) ValidateCreate(ctx context.Context, c *networkv1alpha1.SwitchPortConfiguration) (admission.Warnings, error) {
	return w.validate(ctx, c, false)
}

// ValidateUpdate checks an edit, against the ports that link the configuration too.
func (w ConfigurationWebhook) ValidateUpdate(ctx context.Context, _, c *networkv1alpha1.SwitchPortConfiguration) (admission.Warnings, error) {
	return w.validate(ctx, c, true)
}

// ValidateDelete allows deletion: a port keeps what it applied and reports the loss.
func (ConfigurationWebhook) ValidateDelete(context.Context, *networkv1alpha1.SwitchPortConfiguration) (admission.Warnings, error) {
	return nil, nil
}

func (w ConfigurationWebhook) validate(ctx context.Context, c *networkv1alpha1.SwitchPortConfiguration, linked bool) (admission.Warnings, error) {
	spec := field.NewPath("spec")
	errs := validateACLs(spec.Child("acl"), c.Spec.ACL)
	if _, err := vlan.Parse(string(c.Spec.VLANs)); err != nil {
		errs = append(errs, field.Invalid(spec.Child("vlans"), c.Spec.VLANs, err.Error()))
	}
	if u := c.Spec.UntaggedVLAN; u != nil && !vlan.Valid(int(*u)) {
		errs = append(errs, field.Invalid(spec.Child("untaggedVLAN"), *u, "must be a VLAN id 1..4094"))
	}
	if len(errs) > 0 {
		return nil, invalid(kindConfiguration, c.Name, errs)
	}
	var warns admission.Warnings
	limit := &networkv1alpha1.SwitchResourceLimit{}
	err := w.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: networkv1alpha1.SwitchResourceLimitName}, limit)
	switch {
	case apierrors.IsNotFound(err):
		// Infra teams apply limits and configurations together; the link is refused instead.
		warns = append(warns, "namespace "+c.Namespace+" has no SwitchResourceLimit user-limit yet: no port will take this configuration until it does")
	case err != nil:
		return nil, err
	default:
		errs = append(errs, switchport.FitsLimit(spec, &c.Spec, limit)...)
	}
	if linked {
		more, err := w.fitsLinkingPorts(ctx, c)
		if err != nil {
			return nil, err
		}
		errs = append(errs, more...)
	}
	return warns, invalid(kindConfiguration, c.Name, errs)
}

func (w ConfigurationWebhook) fitsLinkingPorts(ctx context.Context, c *networkv1alpha1.SwitchPortConfiguration) (field.ErrorList, error) {
	ports := &networkv1alpha1.SwitchPortList{}
	if err := w.Reader.List(ctx, ports, client.InNamespace(c.Namespace)); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	for i := range ports.Items {
		p := &ports.Items[i]
		if p.Spec.Configuration == nil || p.Spec.Configuration.Name != c.Name {
			continue
		}
		entry, err := portEntry(ctx, w.Reader, p)
		if err != nil {
			return nil, err
		}
		for _, e := range switchport.FitsPort(field.NewPath("spec"), &c.Spec, entry) {
			e.Detail = fmt.Sprintf("linked by SwitchPort %s: %s", p.Name, e.Detail)
			errs = append(errs, e)
		}
	}
	return errs, nil
}

func validateACLs(path *field.Path, acls []networkv1alpha1.ACL) field.ErrorList {
	var errs field.ErrorList
	for i, a := range acls {
		p := path.Index(i)
		for _, cidr := range []struct {
			name  string
			value networkv1alpha1.CIDR
		}{{"src", a.Src}, {"des", a.Des}} {
			if cidr.value == "" {
				continue
			}
			ip, _, err := net.ParseCIDR(string(cidr.value))
			switch {
			case err != nil:
				errs = append(errs, field.Invalid(p.Child(cidr.name), cidr.value, "not a CIDR"))
			case (ip.To4() != nil) != (a.Type == "ipv4"):
				errs = append(errs, field.Invalid(p.Child(cidr.name), cidr.value, "address family differs from type "+a.Type))
			}
		}
		for _, r := range []struct {
			name  string
			value networkv1alpha1.PortRange
		}{{"srcPortRange", a.SrcPortRange}, {"desPortRange", a.DesPortRange}} {
			if r.value == "" {
				continue
			}
			if a.Protocol != "TCP" && a.Protocol != "UDP" {
				errs = append(errs, field.Forbidden(p.Child(r.name), "port ranges only apply to TCP and UDP, not "+a.Protocol))
				continue
			}
			if msg := portRangeProblem(string(r.value)); msg != "" {
				errs = append(errs, field.Invalid(p.Child(r.name), r.value, msg))
			}
		}
	}
	return errs
}

func portRangeProblem(s string) string {
	lo, hi, isRange := strings.Cut(s, "-")
	if !isRange {
		hi = lo
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	switch {
	case err1 != nil || err2 != nil || a < 1 || b > 65535:
		return "must be a port 1..65535 or a range of them"
	case a > b:
		return "range runs backwards"
	}
	return ""
}
