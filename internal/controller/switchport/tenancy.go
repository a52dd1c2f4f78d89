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

package switchport

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// A configuration is bounded by the limit of its own namespace. Usually that is the port's
// namespace; a port of the infra team's (in its Switch's namespace) cabled to a bare-metal
// host also takes the configuration of the tenant consuming the host, from the tenant's
// namespace, which the host-link controller links. Tenants have no write access to such
// ports, so a cross-namespace link only ever comes from the infra team or rackwire.

// TenantOf is the namespace whose limit bounds the configuration ref on the port.
func TenantOf(port *networkv1alpha1.SwitchPort, ref *networkv1alpha1.ConfigurationRef) string {
	if ref == nil || ref.Namespace == "" {
		return port.Namespace
	}
	return ref.Namespace
}

// MayLinkAcross says whether the port may take a configuration of another namespace: only
// a port in its vouching Switch's own namespace, which only the infra team may write.
func MayLinkAcross(port *networkv1alpha1.SwitchPort, sw *networkv1alpha1.Switch) bool {
	return sw != nil && port.Namespace == sw.Namespace
}

// heldTenant is the namespace of the tenant configuration the port holds, "" when it holds none.
func heldTenant(port *networkv1alpha1.SwitchPort) string {
	if !holdsTenant(port) {
		return ""
	}
	return TenantOf(port, port.Status.ConfigurationRef)
}

// linkedTenant is the namespace of the configuration linked to the port, "" when none is.
func linkedTenant(port *networkv1alpha1.SwitchPort) string {
	if port.Spec.Configuration == nil {
		return ""
	}
	return TenantOf(port, port.Spec.Configuration)
}

// tenantKeys are the namespaces whose limit a port counts against (IndexTenant).
func tenantKeys(o client.Object) []string {
	p, ok := o.(*networkv1alpha1.SwitchPort)
	if !ok {
		return nil
	}
	out := []string{p.Namespace}
	for _, ns := range []string{heldTenant(p), linkedTenant(p)} {
		if ns != "" && ns != out[0] && (len(out) < 2 || ns != out[1]) {
			out = append(out, ns)
		}
	}
	return out
}

// ofTenant keeps the ports whose linked or held configuration belongs to the namespace,
// wherever the ports live, plus the namespace's own ports.
func ofTenant(ports []networkv1alpha1.SwitchPort, namespace string) []networkv1alpha1.SwitchPort {
	var out []networkv1alpha1.SwitchPort
	for i := range ports {
		p := &ports[i]
		if p.Namespace == namespace || heldTenant(p) == namespace || linkedTenant(p) == namespace {
			out = append(out, *p)
		}
	}
	return out
}

// tenantPorts are ofTenant's ports, from the manager's cache through IndexTenant: host ports
// link configurations across namespaces, so no namespace-scoped list finds them all, and
// listing every port of the cluster on each limit event grew with the cluster.
func tenantPorts(ctx context.Context, cached client.Reader, namespace string) ([]networkv1alpha1.SwitchPort, error) {
	ports := &networkv1alpha1.SwitchPortList{}
	if err := cached.List(ctx, ports, client.MatchingFields{IndexTenant: namespace}); err != nil {
		return nil, err
	}
	return ofTenant(ports.Items, namespace), nil
}
