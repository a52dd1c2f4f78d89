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
	"net/http"
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

// +kubebuilder:webhook:path=/mutate-metal3-io-v1alpha1-baremetalhost,mutating=true,failurePolicy=ignore,sideEffects=None,groups=metal3.io,resources=baremetalhosts,verbs=create;update,versions=v1alpha1,name=mbaremetalhost-v1alpha1.rackwire.metal3.io,admissionReviewVersions=v1,timeoutSeconds=5

// HostHoldWebhook pauses a host in the same write that would send BMO off on the wrong network,
// before BMO can see it: a new host that a HostLink wires by its boot MAC (its ports first move to the
// provisioning network), and a provisioned host whose image goes (its ports move back before
// BMO deprovisions it). The host-link controller lets it go once the ports are there. It
// only ever adds BMO's paused annotation with rackwire's value, as a JSON patch of that one
// key, so fields this BMO version does not know survive. Failure is ignored: without it the
// controller still holds the host, a moment later.
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
	return admission.Patched("rackwire holds the host until its switch ports carry the network it needs next", pausePatch(host))
}

func (w HostHoldWebhook) holds(ctx context.Context, req admission.Request, host *metal3v1alpha1.BareMetalHost) (bool, error) {
	switch req.Operation {
	case admissionv1.Create:
		link := &networkv1alpha1.HostLink{}
		err := w.Reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: host.Name}, link)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		// The entries apply to the host that has their MACs: a new host reusing a name
		// is held only when its boot MAC is one of them.
		boot := strings.ToLower(strings.ReplaceAll(host.Spec.BootMACAddress, "-", ":"))
		for _, p := range link.Spec.Ports {
			if boot != "" && strings.ToLower(strings.ReplaceAll(p.MAC, "-", ":")) == boot {
				return true, nil
			}
		}
		return false, nil
	case admissionv1.Update:
		old := &metal3v1alpha1.BareMetalHost{}
		if err := w.Decoder.DecodeRaw(req.OldObject, old); err != nil {
			return false, err
		}
		// A host rackwire manages carries its finalizer; it is held when the update changes
		// what its ports must carry while BMO may act on it.
		if !controllerutil.ContainsFinalizer(host, hostlink.Finalizer) {
			return false, nil
		}
		return hostlink.NetworkOf(old) != hostlink.NetworkOf(host) && hostlink.NetworkOf(host) != networkv1alpha1.NetworkClean, nil
	}
	return false, nil
}

func pausePatch(host *metal3v1alpha1.BareMetalHost) jsonpatch.JsonPatchOperation {
	if host.Annotations == nil {
		return jsonpatch.NewOperation("add", "/metadata/annotations",
			map[string]string{metal3v1alpha1.PausedAnnotation: networkv1alpha1.PausedByRackwire})
	}
	key := strings.ReplaceAll(strings.ReplaceAll(metal3v1alpha1.PausedAnnotation, "~", "~0"), "/", "~1")
	return jsonpatch.NewOperation("add", "/metadata/annotations/"+key, networkv1alpha1.PausedByRackwire)
}
