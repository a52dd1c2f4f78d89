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

package hostlink

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
)

// wantOf is the configuration the port must carry on the host's network: the infra team's
// provisioning configuration (or the clean state), the consumer's configuration for the NIC,
// or, for a host the infra team provisions without a Metal3Machine, the HostLink's own. A
// refused consumer gets nothing: the ports keep the provisioning configuration.
func wantOf(w wired, network networkv1alpha1.HostNetwork, t *tenant) *networkv1alpha1.ConfigurationRef {
	own := func(r *networkv1alpha1.ObjectRef) *networkv1alpha1.ConfigurationRef {
		if r == nil {
			return nil
		}
		return &networkv1alpha1.ConfigurationRef{Name: r.Name, Namespace: w.port.Namespace}
	}
	switch network {
	case networkv1alpha1.NetworkProvisioning:
		return own(w.provisioning)
	case networkv1alpha1.NetworkTenant:
		if t != nil && t.refused {
			return own(w.provisioning)
		}
		if t == nil {
			return own(w.configured)
		}
		if ref, ok := t.byMAC[w.mac]; ok {
			return &ref
		}
	}
	return nil
}

// sameRef compares references with the port's namespace as the default.
func sameRef(a, b *networkv1alpha1.ConfigurationRef, portNamespace string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ns := func(r *networkv1alpha1.ConfigurationRef) string {
		if r.Namespace == "" {
			return portNamespace
		}
		return r.Namespace
	}
	return a.Name == b.Name && ns(a) == ns(b)
}

// inProgress are the SwitchPort reasons of a port on its way; any other reason on a port
// that is not Ready is a failure the host's owner must hear about.
var inProgress = map[string]bool{
	switchport.ReasonIdle: true, switchport.ReasonActive: true, switchport.ReasonConfiguring: true,
	switchport.ReasonCleaning: true, switchport.ReasonSucceeded: true,
}

// carriage says whether the port carries want: linked, observed, in the steady state that
// matches, and Ready. failed is set when the port reports a failure rather than progress.
func carriage(p *networkv1alpha1.SwitchPort, want *networkv1alpha1.ConfigurationRef) (ok bool, carries string, failed string) {
	if !sameRef(p.Spec.Configuration, want, p.Namespace) {
		return false, "linking", ""
	}
	ready := meta.FindStatusCondition(p.Status.Conditions, networkv1alpha1.ConditionReady)
	if f := meta.FindStatusCondition(p.Status.Conditions, switchport.ConditionFailed); f != nil && f.Status == metav1.ConditionTrue {
		return false, "failed", fmt.Sprintf("%s: %s", f.Reason, f.Message)
	}
	if ready != nil && ready.Status != metav1.ConditionTrue && !inProgress[ready.Reason] {
		return false, "failed", fmt.Sprintf("%s: %s", ready.Reason, ready.Message)
	}
	if p.Status.ObservedGeneration != p.Generation || ready == nil || ready.Status != metav1.ConditionTrue {
		return false, string(p.Status.State), ""
	}
	if want == nil {
		if p.Status.State == networkv1alpha1.StateIdle {
			return true, "yes", ""
		}
		return false, string(p.Status.State), ""
	}
	if p.Status.State == networkv1alpha1.StateActive && sameRef(p.Status.ConfigurationRef, want, p.Namespace) {
		return true, "yes", ""
	}
	return false, string(p.Status.State), ""
}
