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
	"context"
	"encoding/json"
	"fmt"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Metal3MachineGVK is CAPM3's machine; rackwire reads only its metadata, so any served
// version and schema do.
var Metal3MachineGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3Machine"}

// NetworkConfiguration is one entry of the seed's Metal3Machine.spec.networkConfiguration.
type NetworkConfiguration struct {
	ConfigurationRef networkv1alpha1.ObjectRef `json:"configurationRef"`
	NICHint          NICHint                   `json:"nicHint"`
}

// NICHint picks the host's NIC: by name as inspection reports it, or by MAC.
type NICHint struct {
	Name     string `json:"name,omitempty"`
	MAC      string `json:"mac,omitempty"`
	SmartNIC bool   `json:"smartNIC,omitempty"`
}

// ParseNetworkConfiguration reads the annotation's JSON list.
func ParseNetworkConfiguration(s string) ([]NetworkConfiguration, error) {
	var out []NetworkConfiguration
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("annotation %s is not a JSON list of {configurationRef, nicHint}: %w", networkv1alpha1.AnnotationNetworkConfiguration, err)
	}
	for i, nc := range out {
		switch {
		case nc.ConfigurationRef.Name == "":
			return nil, fmt.Errorf("annotation %s: entry %d has no configurationRef.name", networkv1alpha1.AnnotationNetworkConfiguration, i)
		case nc.NICHint.Name == "" && nc.NICHint.MAC == "":
			return nil, fmt.Errorf("annotation %s: entry %d has neither nicHint.name nor nicHint.mac", networkv1alpha1.AnnotationNetworkConfiguration, i)
		}
	}
	return out, nil
}

// tenant is the consumer of a host and the configuration it asks for, per NIC MAC. A refused
// consumer brings nothing: the host's ports keep the infra team's provisioning configuration.
type tenant struct {
	machine client.ObjectKey
	byMAC   map[string]networkv1alpha1.ConfigurationRef
	refused bool
}

func (t *tenant) accepted() bool { return t != nil && !t.refused }

// consumerOf reads the Metal3Machine behind the host's consumerRef. Only a Metal3Machine
// consumer brings tenant configurations; they come from its own namespace only, whatever
// the annotation says, so a tenant reaches a host's ports only through a host it consumes.
// Whoever writes the host writes consumerRef, so the consumer counts only as CAPM3 makes
// it: in the host's namespace, naming the host back in its metal3.io/BareMetalHost
// annotation. A problem is returned as a message; the error is for the API only.
func consumerOf(ctx context.Context, c client.Reader, host *metal3v1alpha1.BareMetalHost, nics map[string]string) (*tenant, string, error) {
	ref := host.Spec.ConsumerRef
	if ref == nil || ref.Kind != Metal3MachineGVK.Kind {
		return nil, "", nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != Metal3MachineGVK.Group {
		return nil, fmt.Sprintf("consumerRef apiVersion %q is not CAPM3's", ref.APIVersion), nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = host.Namespace
	}
	key := client.ObjectKey{Namespace: ns, Name: ref.Name}
	if ns != host.Namespace {
		return &tenant{machine: key, refused: true}, fmt.Sprintf("consumerRef names Metal3Machine %s outside the host's namespace %s; it is not the host's consumer, the ports keep the provisioning configuration", key, host.Namespace), nil
	}
	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(Metal3MachineGVK)
	if err := c.Get(ctx, key, m); err != nil {
		if apierrors.IsNotFound(err) {
			return &tenant{machine: key, refused: true}, fmt.Sprintf("Metal3Machine %s is not found; the ports keep the provisioning configuration", key), nil
		}
		return nil, "", err
	}
	if back, self := m.GetAnnotations()[networkv1alpha1.AnnotationConsumerHost], host.Namespace+"/"+host.Name; back != self {
		return &tenant{machine: key, refused: true}, fmt.Sprintf("Metal3Machine %s does not name this host back (annotation %s is %q, not %q); it is not the host's consumer, the ports keep the provisioning configuration",
			key, networkv1alpha1.AnnotationConsumerHost, back, self), nil
	}
	t := &tenant{machine: key, byMAC: map[string]networkv1alpha1.ConfigurationRef{}}
	raw, ok := m.GetAnnotations()[networkv1alpha1.AnnotationNetworkConfiguration]
	if !ok {
		return t, "", nil
	}
	entries, err := ParseNetworkConfiguration(raw)
	if err != nil {
		return t, fmt.Sprintf("Metal3Machine %s: %v", key, err), nil
	}
	var problems []string
	for _, nc := range entries {
		if nc.ConfigurationRef.Namespace != "" && nc.ConfigurationRef.Namespace != ns {
			problems = append(problems, fmt.Sprintf("configuration %s/%s is outside the Metal3Machine's namespace %s", nc.ConfigurationRef.Namespace, nc.ConfigurationRef.Name, ns))
			continue
		}
		mac := normalMAC(nc.NICHint.MAC)
		if mac == "" {
			for m, name := range nics {
				if name == nc.NICHint.Name {
					mac = m
				}
			}
		}
		if mac == "" {
			problems = append(problems, fmt.Sprintf("nicHint %q matches no NIC the host's inspection reported", nc.NICHint.Name))
			continue
		}
		t.byMAC[mac] = networkv1alpha1.ConfigurationRef{Name: nc.ConfigurationRef.Name, Namespace: ns}
	}
	msg := ""
	if len(problems) > 0 {
		msg = fmt.Sprintf("Metal3Machine %s: %v", key, problems)
	}
	return t, msg, nil
}
