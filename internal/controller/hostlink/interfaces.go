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
	"crypto/sha256"
	"encoding/json"
	"fmt"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/vlan"
)

// Newer BMO releases describe a host's switch ports in BareMetalHost.spec.networkInterfaces and
// the HostNetworkAttachment kind, for Ironic's networking service. BMO v0.13.2 has neither, so
// both are read without typed clients; hosts described that way get their ports configured by
// rackwire's drivers.

// HostNetworkAttachmentGVK is the newer BMO's per-NIC switch port configuration.
var HostNetworkAttachmentGVK = schema.GroupVersionKind{Group: "metal3.io", Version: "v1alpha1", Kind: "HostNetworkAttachment"}

// networkInterface is one entry of spec.networkInterfaces. The attachment reference is
// hostNetworkAttachment, or networkAttachmentRef as the Metal3 design document spells it.
type networkInterface struct {
	Name                  string                     `json:"name,omitempty"`
	MACAddress            string                     `json:"macAddress,omitempty"`
	HostNetworkAttachment *networkv1alpha1.ObjectRef `json:"hostNetworkAttachment,omitempty"`
	NetworkAttachmentRef  *networkv1alpha1.ObjectRef `json:"networkAttachmentRef,omitempty"`
	SwitchPort            *struct {
		SwitchID string `json:"switchID"`
		PortID   string `json:"portID"`
	} `json:"switchPort,omitempty"`
}

func (n networkInterface) attachment() *networkv1alpha1.ObjectRef {
	if n.HostNetworkAttachment != nil {
		return n.HostNetworkAttachment
	}
	return n.NetworkAttachmentRef
}

// networkInterfaces reads the host's spec.networkInterfaces, which the typed BareMetalHost of
// BMO v0.13.2 drops.
func networkInterfaces(ctx context.Context, c client.Reader, host *metal3v1alpha1.BareMetalHost) ([]networkInterface, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(metal3v1alpha1.GroupVersion.WithKind("BareMetalHost"))
	if err := c.Get(ctx, client.ObjectKeyFromObject(host), u); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	raw, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "networkInterfaces")
	if !ok {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var out []networkInterface
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("spec.networkInterfaces: %w", err)
	}
	return out, nil
}

// attachmentSpec is a HostNetworkAttachment's spec.
type attachmentSpec struct {
	Mode         string `json:"mode,omitempty"`
	NativeVLAN   int    `json:"nativeVLAN,omitempty"`
	AllowedVLANs []int  `json:"allowedVLANs,omitempty"`
	MTU          int    `json:"mtu,omitempty"`
}

// AttachmentConfiguration turns a HostNetworkAttachment's spec into the SwitchPortConfiguration
// that carries it: access puts the native VLAN untagged, trunk tags the allowed VLANs (and the
// native one untagged when set), hybrid does both. What rackwire cannot apply is an error.
func AttachmentConfiguration(mode string, native int, allowed []int, mtu int) (networkv1alpha1.SwitchPortConfigurationSpec, error) {
	var spec networkv1alpha1.SwitchPortConfigurationSpec
	if mtu != 0 {
		return spec, fmt.Errorf("mtu %d: rackwire's switch configurations carry no MTU; remove it or configure the MTU on the switch", mtu)
	}
	if native != 0 {
		if !vlan.Valid(native) {
			return spec, fmt.Errorf("nativeVLAN %d is not a VLAN id 1..4094", native)
		}
		id := networkv1alpha1.VLANID(native)
		spec.UntaggedVLAN = &id
	}
	for _, id := range allowed {
		if !vlan.Valid(id) {
			return spec, fmt.Errorf("allowedVLANs: %d is not a VLAN id 1..4094", id)
		}
	}
	switch mode {
	case "", "access":
		if native == 0 || len(allowed) > 0 {
			return spec, fmt.Errorf("mode access takes nativeVLAN and no allowedVLANs")
		}
	case "trunk", "hybrid":
		if len(allowed) == 0 {
			return spec, fmt.Errorf("mode %s takes allowedVLANs", mode)
		}
		if mode == "hybrid" && native == 0 {
			return spec, fmt.Errorf("mode hybrid takes nativeVLAN")
		}
		spec.VLANs = networkv1alpha1.VLANRange(vlan.Of(allowed...).String())
	default:
		return spec, fmt.Errorf("mode %q is none of access, trunk, hybrid", mode)
	}
	return spec, nil
}

// LabelAttachment marks the SwitchPortConfigurations rackwire derives from a HostNetworkAttachment.
const LabelAttachment = "rackwire.metal3.io/host-network-attachment"

// attachmentConfig makes sure the SwitchPortConfiguration derived from the attachment exists,
// beside it and owned by it, and returns its reference. Its name carries a hash of the spec:
// configurations are immutable while linked, so a changed attachment is a new configuration
// that the ports move to in place.
func attachmentConfig(ctx context.Context, c client.Client, ref client.ObjectKey) (*networkv1alpha1.ConfigurationRef, string, error) {
	a := &unstructured.Unstructured{}
	a.SetGroupVersionKind(HostNetworkAttachmentGVK)
	if err := c.Get(ctx, ref, a); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, fmt.Sprintf("HostNetworkAttachment %s is not found", ref), nil
		}
		return nil, "", err
	}
	raw, _, _ := unstructured.NestedFieldNoCopy(a.Object, "spec")
	b, _ := json.Marshal(raw)
	var s attachmentSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Sprintf("HostNetworkAttachment %s: %v", ref, err), nil
	}
	spec, err := AttachmentConfiguration(s.Mode, s.NativeVLAN, s.AllowedVLANs, s.MTU)
	if err != nil {
		return nil, fmt.Sprintf("HostNetworkAttachment %s: %v", ref, err), nil
	}
	canon, _ := json.Marshal(spec)
	base := ref.Name[:min(len(ref.Name), 230)]
	name := fmt.Sprintf("hna-%s-%x", base, sha256.Sum256(canon))[:len("hna-")+len(base)+1+10]
	cfg := &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: name,
		Labels: map[string]string{LabelAttachment: ref.Name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: HostNetworkAttachmentGVK.GroupVersion().String(), Kind: HostNetworkAttachmentGVK.Kind,
			Name: a.GetName(), UID: a.GetUID()}}}, Spec: spec}
	err = c.Create(ctx, cfg)
	if apierrors.IsAlreadyExists(err) {
		// The name is predictable: one written by someone else is used only if it is exactly
		// what the attachment says and the attachment owns it.
		have := &networkv1alpha1.SwitchPortConfiguration{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cfg), have); err != nil {
			return nil, "", err
		}
		if !equality.Semantic.DeepEqual(have.Spec, spec) || !ownedBy(have, a.GetUID()) {
			return nil, fmt.Sprintf("SwitchPortConfiguration %s/%s exists but is not the one derived from HostNetworkAttachment %s; delete it", ref.Namespace, name, ref), nil
		}
		err = nil
	}
	if err != nil {
		return nil, "", err
	}
	return &networkv1alpha1.ConfigurationRef{Name: name, Namespace: ref.Namespace}, "", nil
}

func ownedBy(o metav1.Object, uid types.UID) bool {
	for _, r := range o.GetOwnerReferences() {
		if r.UID == uid {
			return true
		}
	}
	return false
}
