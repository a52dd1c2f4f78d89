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
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/hostlink"
)

// The webhook's registrations are config/webhook/host.yaml, by hand: it fails closed for the
// hosts rackwire wires (label rackwire.metal3.io/wired) and is ignored on failure for others.

// HostHoldWebhook pauses a host in the same write that would send BMO off on the wrong network,
// before BMO can see it: a new host that a HostLink wires by its boot MAC (its ports first move to the
// provisioning network), and a provisioned host whose image goes (its ports move back before
// BMO deprovisions it). The host-link controller lets it go once the ports are there. It
// only ever adds BMO's paused annotation with rackwire's value, as a JSON patch of that one
// key (and the wired label at creation), so fields this BMO version does not know survive.
type HostHoldWebhook struct {
	Reader  client.Reader
	Decoder admission.Decoder
}

// Handle implements admission.Handler.
func (w HostHoldWebhook) Handle(ctx context.Context, req admission.Request) admission.Response {
	host := &metal3v1alpha1.BareMetalHost{}
	if err := w.Decoder.Decode(req, host); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if _, paused := host.Annotations[metal3v1alpha1.PausedAnnotation]; paused {
		return admission.Allowed("")
	}
	hold, err := w.holds(ctx, req, host)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if !hold {
		return admission.Allowed("")
	}
	patches := []jsonpatch.JsonPatchOperation{pausePatch(host)}
	if req.Operation == admissionv1.Create && host.Labels[networkv1alpha1.LabelWired] != "true" {
		patches = append(patches, labelPatch(host))
	}
	return admission.Patched("rackwire holds the host until its switch ports carry the network it needs next", patches...)
}

func labelPatch(host *metal3v1alpha1.BareMetalHost) jsonpatch.JsonPatchOperation {
	if host.Labels == nil {
		return jsonpatch.NewOperation("add", "/metadata/labels", map[string]string{networkv1alpha1.LabelWired: "true"})
	}
	return jsonpatch.NewOperation("add", "/metadata/labels/"+escapePointer(networkv1alpha1.LabelWired), "true")
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func (w HostHoldWebhook) holds(ctx context.Context, req admission.Request, host *metal3v1alpha1.BareMetalHost) (bool, error) {
	switch req.Operation {
	case admissionv1.Create:
		known, err := w.knownSwitchPort(ctx, req)
		if err != nil || known {
			return known, err
		}
		link := &networkv1alpha1.HostLink{}
		err = w.Reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: host.Name}, link)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		// The entries apply to the host that has their MACs: a new host reusing a name
		// is held only when its boot MAC is one of them.
		boot := normalMAC(host.Spec.BootMACAddress)
		for _, p := range link.Spec.Ports {
			if boot != "" && normalMAC(p.MAC) == boot {
				return true, nil
			}
		}
		return false, nil
	case admissionv1.Update:
		old := &metal3v1alpha1.BareMetalHost{}
		if err := w.Decoder.DecodeRaw(req.OldObject, old); err != nil {
			return false, err
		}
		// A host rackwire manages carries its finalizer and label, but whoever writes the host
		// may drop both in the very update that changes its network: the old object counts,
		// and so does the HostLink's record of the ports the host holds, which only rackwire
		// writes.
		link, err := w.linkOf(ctx, host)
		if err != nil {
			return false, err
		}
		if !marked(old) && !marked(host) && !holdsPorts(link) {
			return false, nil
		}
		need := hostlink.NetworkOf(host)
		if need == networkv1alpha1.NetworkClean {
			return false, nil
		}
		if hostlink.NetworkOf(old) != need {
			return true, nil
		}
		// Lifting a pause lets BMO act on this very write: the host is held unless its
		// HostLink reports its ports carry what it needs. That holds for rackwire's own pause
		// too, which a host writer may delete: rackwire lifts it once the status says the
		// ports are there (a lift that raced its own status write is held once more and
		// repeated after it), or when the infra team's release annotation says so.
		value, was := old.Annotations[metal3v1alpha1.PausedAnnotation]
		switch {
		case !was:
			return false, nil
		case value == networkv1alpha1.PausedByRackwire:
			if link == nil || link.Annotations[networkv1alpha1.AnnotationReleaseHost] == "true" || !holdsPorts(link) {
				return false, nil
			}
		}
		return !carries(link, need), nil
	}
	return false, nil
}

// linkOf is the host's HostLink, nil when it has none.
func (w HostHoldWebhook) linkOf(ctx context.Context, host *metal3v1alpha1.BareMetalHost) (*networkv1alpha1.HostLink, error) {
	link := &networkv1alpha1.HostLink{}
	err := w.Reader.Get(ctx, client.ObjectKey{Namespace: host.Namespace, Name: host.Name}, link)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return link, nil
}

// marked says whether the host carries rackwire's finalizer or wired label.
func marked(host *metal3v1alpha1.BareMetalHost) bool {
	return controllerutil.ContainsFinalizer(host, hostlink.Finalizer) || host.Labels[networkv1alpha1.LabelWired] == "true"
}

// holdsPorts says whether the HostLink's status records a port the host holds.
func holdsPorts(link *networkv1alpha1.HostLink) bool {
	if link == nil {
		return false
	}
	for _, p := range link.Status.Ports {
		if p.HeldBy == nil && p.Since != nil {
			return true
		}
	}
	return false
}

// carries says whether the HostLink's status reports every port ready for the network.
func carries(link *networkv1alpha1.HostLink, network networkv1alpha1.HostNetwork) bool {
	if link == nil || link.Status.Network != network {
		return false
	}
	for _, p := range link.Status.Ports {
		if !p.Ready {
			return false
		}
	}
	return true
}

func pausePatch(host *metal3v1alpha1.BareMetalHost) jsonpatch.JsonPatchOperation {
	if host.Annotations == nil {
		return jsonpatch.NewOperation("add", "/metadata/annotations",
			map[string]string{metal3v1alpha1.PausedAnnotation: networkv1alpha1.PausedByRackwire})
	}
	return jsonpatch.NewOperation("add", "/metadata/annotations/"+escapePointer(metal3v1alpha1.PausedAnnotation), networkv1alpha1.PausedByRackwire)
}

// knownSwitchPort says whether a new host's spec.networkInterfaces (newer BMO; the typed host
// of v0.13.2 drops it, so the raw object is read) names a switchPort on a port of a Switch
// that allows discovered wiring for the host's namespace: its ports move before BMO acts,
// like a host a HostLink wires.
func (w HostHoldWebhook) knownSwitchPort(ctx context.Context, req admission.Request) (bool, error) {
	var raw struct {
		Spec struct {
			NetworkInterfaces []struct {
				SwitchPort *struct {
					SwitchID string `json:"switchID"`
					PortID   string `json:"portID"`
				} `json:"switchPort"`
			} `json:"networkInterfaces"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(req.Object.Raw, &raw); err != nil {
		return false, err
	}
	var switches *networkv1alpha1.SwitchList
	for _, ni := range raw.Spec.NetworkInterfaces {
		if ni.SwitchPort == nil || ni.SwitchPort.SwitchID == "" {
			continue
		}
		if switches == nil {
			switches = &networkv1alpha1.SwitchList{}
			if err := w.Reader.List(ctx, switches); err != nil {
				return false, err
			}
		}
		for _, sw := range switches.Items {
			if !strings.EqualFold(normalMAC(sw.Spec.ChassisMAC), normalMAC(ni.SwitchPort.SwitchID)) || sw.Spec.ChassisMAC == "" {
				continue
			}
			for _, e := range sw.Spec.Ports {
				allowed := sw.Spec.DiscoveryNamespaces
				if e.DiscoveryNamespaces != nil {
					allowed = e.DiscoveryNamespaces
				}
				if e.Name == ni.SwitchPort.PortID && slices.Contains(allowed, req.Namespace) {
					return true, nil
				}
			}
		}
	}
	return false, nil
}

func normalMAC(mac string) string { return strings.ToLower(strings.ReplaceAll(mac, "-", ":")) }
