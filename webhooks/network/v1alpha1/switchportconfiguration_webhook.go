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
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/openflow"
	"github.com/rackwire/rackwire/internal/vlan"
)

// +kubebuilder:webhook:path=/validate-metal3-io-v1alpha1-switchportconfiguration,mutating=false,failurePolicy=fail,sideEffects=None,groups=metal3.io,resources=switchportconfigurations,verbs=create;update;delete,versions=v1alpha1,name=vswitchportconfiguration-v1alpha1.metal3.io,admissionReviewVersions=v1

// ConfigurationWebhook checks a SwitchPortConfiguration: VLANs, ACLs and the namespace's
// limit. A configuration is immutable while a port links it or a Switch cleans ports to it
// (the seed's immutable approach: CAPI rolls machines onto a new configuration while old
// machines keep theirs).
type ConfigurationWebhook struct {
	Reader client.Reader
}

var _ admission.Validator[*networkv1alpha1.SwitchPortConfiguration] = ConfigurationWebhook{}

// ValidateCreate checks a new configuration.
func (w ConfigurationWebhook) ValidateCreate(ctx context.Context, c *networkv1alpha1.SwitchPortConfiguration) (admission.Warnings, error) {
	return w.validate(ctx, c)
}

// ValidateUpdate refuses a spec edit of a linked configuration and checks any other edit.
func (w ConfigurationWebhook) ValidateUpdate(ctx context.Context, old, c *networkv1alpha1.SwitchPortConfiguration) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec, c.Spec) {
		return nil, nil
	}
	users, err := w.users(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(users) > 0 {
		return nil, invalid(kindConfiguration, c.Name, field.ErrorList{field.Forbidden(field.NewPath("spec"), fmt.Sprintf(
			"configuration %s is in use by %s; a configuration in use is immutable: create a new SwitchPortConfiguration and link it instead (ports move to it in place, without an outage)",
			c.Name, strings.Join(users, ", ")))})
	}
	return w.validate(ctx, c)
}

// users names the SwitchPorts that link or hold the configuration and the Switches that clean
// ports to it.
func (w ConfigurationWebhook) users(ctx context.Context, c *networkv1alpha1.SwitchPortConfiguration) ([]string, error) {
	var out []string
	// Host ports of the infra team's namespace link tenants' configurations too.
	ports := &networkv1alpha1.SwitchPortList{}
	if err := w.Reader.List(ctx, ports); err != nil {
		return nil, err
	}
	for i := range ports.Items {
		p := &ports.Items[i]
		linked := p.Spec.Configuration != nil && p.Spec.Configuration.Name == c.Name && switchport.TenantOf(p, p.Spec.Configuration) == c.Namespace
		held := p.Status.ConfigurationRef != nil && p.Status.ConfigurationRef.Name == c.Name && switchport.TenantOf(p, p.Status.ConfigurationRef) == c.Namespace
		switch {
		case (linked || held) && p.Namespace == c.Namespace:
			out = append(out, "SwitchPort "+p.Name)
		case linked || held:
			out = append(out, "SwitchPort "+p.Namespace+"/"+p.Name)
		}
	}
	provisions, err := w.provisioning(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, sw := range provisions {
		out = append(out, "Switch "+sw+" (its provisioning configuration)")
	}
	sort.Strings(out)
	return out, nil
}

// provisioning names the Switches that clean ports to the configuration.
func (w ConfigurationWebhook) provisioning(ctx context.Context, c *networkv1alpha1.SwitchPortConfiguration) ([]string, error) {
	switches := &networkv1alpha1.SwitchList{}
	if err := w.Reader.List(ctx, switches, client.InNamespace(c.Namespace)); err != nil {
		return nil, err
	}
	var out []string
	for i := range switches.Items {
		sw := &switches.Items[i]
		uses := switchport.CleanPolicyOf(sw, "").ProvisioningConfiguration == c.Name
		for _, e := range sw.Spec.Ports {
			uses = uses || switchport.CleanPolicyOf(sw, e.Name).ProvisioningConfiguration == c.Name
		}
		if uses {
			out = append(out, sw.Name)
		}
	}
	return out, nil
}

// isolated refuses a provisioning configuration whose VLANs a namespace's limit lets tenants
// use. The Switch webhook checks the same when the Switch is written, but admits a Switch
// whose configuration does not exist yet: created afterwards, it is checked here.
func (w ConfigurationWebhook) isolated(ctx context.Context, c *networkv1alpha1.SwitchPortConfiguration) (field.ErrorList, error) {
	provisions, err := w.provisioning(ctx, c)
	if err != nil || len(provisions) == 0 {
		return nil, err
	}
	limits := &networkv1alpha1.SwitchResourceLimitList{}
	if err := w.Reader.List(ctx, limits); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	held := vlansOf(&c.Spec)
	for _, l := range limits.Items {
		if allowed, err := vlan.Parse(string(l.Spec.VLANRange)); err == nil && allowed.Overlaps(held) {
			errs = append(errs, field.Forbidden(field.NewPath("spec"), fmt.Sprintf(
				"configuration %s is the provisioning network of Switch %s, whose VLANs must be isolated, but namespace %s's SwitchResourceLimit (%s) lets its tenants use VLANs %s of them",
				c.Name, strings.Join(provisions, ", "), l.Namespace, l.Spec.VLANRange, allowed.Intersect(held))))
		}
	}
	return errs, nil
}

// ValidateDelete refuses to delete a configuration in use: deleted and created again under
// the same name, it would re-plug every port that links it, around "immutable while in use".
// A namespace's deletion gets through once the ports that link it are cleaned and gone.
func (w ConfigurationWebhook) ValidateDelete(ctx context.Context, c *networkv1alpha1.SwitchPortConfiguration) (admission.Warnings, error) {
	users, err := w.users(ctx, c)
	if err != nil || len(users) == 0 {
		return nil, err
	}
	return nil, apierrors.NewForbidden(networkv1alpha1.GroupVersion.WithResource("switchportconfigurations").GroupResource(), c.Name, fmt.Errorf(
		"configuration %s is in use by %s: unlink it first (a configuration in use is neither changed nor deleted; create a new one and link it instead)",
		c.Name, strings.Join(users, ", ")))
}

func (w ConfigurationWebhook) validate(ctx context.Context, c *networkv1alpha1.SwitchPortConfiguration) (admission.Warnings, error) {
	spec := field.NewPath("spec")
	errs := validateACLs(spec.Child("acl"), c.Spec.ACL)
	if tagged, err := vlan.Parse(string(c.Spec.VLANs)); err != nil {
		errs = append(errs, field.Invalid(spec.Child("vlans"), c.Spec.VLANs, err.Error()))
	} else {
		errs = append(errs, notDefaultVLAN(spec.Child("vlans"), c.Spec.VLANs, tagged)...)
	}
	if u := c.Spec.UntaggedVLAN; u != nil && !vlan.Valid(int(*u)) {
		errs = append(errs, field.Invalid(spec.Child("untaggedVLAN"), *u, "must be a VLAN id 1..4094"))
	} else if u != nil {
		errs = append(errs, notDefaultVLAN(spec.Child("untaggedVLAN"), *u, vlan.Of(int(*u)))...)
	}
	if !switchport.HasVLANs(&c.Spec) {
		errs = append(errs, field.Required(spec.Child("untaggedVLAN"), "set spec.untaggedVLAN or spec.vlans (or both): a port with neither would stay on the switch's default, which on Open vSwitch trunks every VLAN"),
			field.Required(spec.Child("vlans"), "set spec.vlans or spec.untaggedVLAN"))
	}
	if len(errs) > 0 {
		return nil, invalid(kindConfiguration, c.Name, errs)
	}
	errs, err := w.isolated(ctx, c)
	if err != nil {
		return nil, err
	}
	var warns admission.Warnings
	limit := &networkv1alpha1.SwitchResourceLimit{}
	err = w.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: networkv1alpha1.SwitchResourceLimitName}, limit)
	switch {
	case apierrors.IsNotFound(err):
		// Infra teams apply limits and configurations together; the link is refused instead.
		warns = append(warns, "namespace "+c.Namespace+" has no SwitchResourceLimit user-limit yet: no port will take this configuration until it does")
	case err != nil:
		return nil, err
	default:
		errs = append(errs, switchport.FitsLimit(spec, &c.Spec, limit)...)
	}
	return warns, invalid(kindConfiguration, c.Name, errs)
}

func validateACLs(path *field.Path, acls []networkv1alpha1.ACL) field.ErrorList {
	errs := validateRules(path, acls)
	if len(errs) == 0 {
		errs = append(errs, flowBound(path, acls)...)
	}
	return errs
}

// flowBound refuses rules that render more flows than one port may hold: the bound is
// checked here, so that one tenant's rules never fail the run of every port of a switch.
func flowBound(path *field.Path, acls []networkv1alpha1.ACL) field.ErrorList {
	rules := make([]openflow.Rule, 0, len(acls))
	for _, a := range acls {
		var r openflow.Rule
		if a.SrcPortRange != "" {
			r.SrcPorts, _ = openflow.ParsePortRange(string(a.SrcPortRange))
		}
		if a.DesPortRange != "" {
			r.DstPorts, _ = openflow.ParsePortRange(string(a.DesPortRange))
		}
		rules = append(rules, r)
	}
	if n := openflow.FlowCount(rules); n > openflow.MaxFlows {
		return field.ErrorList{field.Invalid(path, fmt.Sprintf("%d rules", len(acls)), fmt.Sprintf(
			"the rules render %d OpenFlow flows on the port, at most %d are allowed: a port range costs one flow per aligned block it spans (up to 30), and a rule with both ranges costs their product; narrow or align the ranges, or split the rules",
			n, openflow.MaxFlows))}
	}
	return nil
}

func validateRules(path *field.Path, acls []networkv1alpha1.ACL) field.ErrorList {
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
