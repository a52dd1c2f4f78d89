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
	"strings"
	"testing"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

func TestNetworkOf(t *testing.T) {
	now := metav1.Now()
	img := &metal3v1alpha1.Image{URL: "http://x/a.img"}
	host := func(state metal3v1alpha1.ProvisioningState, spec, status *metal3v1alpha1.Image, mutate ...func(*metal3v1alpha1.BareMetalHost)) *metal3v1alpha1.BareMetalHost {
		h := &metal3v1alpha1.BareMetalHost{}
		h.Status.Provisioning.State = state
		h.Spec.Image = spec
		if status != nil {
			h.Status.Provisioning.Image = *status
		}
		for _, m := range mutate {
			m(h)
		}
		return h
	}
	deleting := func(bmoDone bool) func(*metal3v1alpha1.BareMetalHost) {
		return func(h *metal3v1alpha1.BareMetalHost) {
			h.DeletionTimestamp = &now
			h.Finalizers = []string{Finalizer}
			if !bmoDone {
				h.Finalizers = append(h.Finalizers, metal3v1alpha1.BareMetalHostFinalizer)
			}
		}
	}
	for _, tc := range []struct {
		name string
		host *metal3v1alpha1.BareMetalHost
		want networkv1alpha1.HostNetwork
	}{
		{"new host", host("", nil, nil), networkv1alpha1.NetworkProvisioning},
		{"registering", host(metal3v1alpha1.StateRegistering, nil, nil), networkv1alpha1.NetworkProvisioning},
		{"inspecting", host(metal3v1alpha1.StateInspecting, nil, nil), networkv1alpha1.NetworkProvisioning},
		{"available", host(metal3v1alpha1.StateAvailable, nil, nil), networkv1alpha1.NetworkProvisioning},
		{"preparing", host(metal3v1alpha1.StatePreparing, nil, nil), networkv1alpha1.NetworkProvisioning},
		{"provisioning", host(metal3v1alpha1.StateProvisioning, img, nil), networkv1alpha1.NetworkProvisioning},
		{"provisioned", host(metal3v1alpha1.StateProvisioned, img, img), networkv1alpha1.NetworkTenant},
		{"provisioned, image gone", host(metal3v1alpha1.StateProvisioned, nil, img), networkv1alpha1.NetworkProvisioning},
		{"provisioned, image changed", host(metal3v1alpha1.StateProvisioned, &metal3v1alpha1.Image{URL: "http://x/b.img"}, img), networkv1alpha1.NetworkProvisioning},
		{"externally provisioned", host(metal3v1alpha1.StateExternallyProvisioned, nil, nil), networkv1alpha1.NetworkTenant},
		{"deprovisioning", host(metal3v1alpha1.StateDeprovisioning, nil, img), networkv1alpha1.NetworkProvisioning},
		{"deleted while provisioned, BMO deprovisions", host(metal3v1alpha1.StateProvisioned, img, img, deleting(false)), networkv1alpha1.NetworkProvisioning},
		{"deleted, BMO done", host(metal3v1alpha1.StateDeleting, nil, nil, deleting(true)), networkv1alpha1.NetworkClean},
		{"powering off before delete", host(metal3v1alpha1.StatePoweringOffBeforeDelete, nil, nil, deleting(false)), networkv1alpha1.NetworkClean},
		{"detached by annotation", host(metal3v1alpha1.StateProvisioned, img, img, func(h *metal3v1alpha1.BareMetalHost) {
			h.Annotations = map[string]string{metal3v1alpha1.DetachedAnnotation: ""}
		}), networkv1alpha1.NetworkClean},
		{"detached status", host(metal3v1alpha1.StateProvisioned, img, img, func(h *metal3v1alpha1.BareMetalHost) {
			h.Status.OperationalStatus = metal3v1alpha1.OperationalStatusDetached
		}), networkv1alpha1.NetworkClean},
		{"custom deploy kept", host(metal3v1alpha1.StateProvisioned, nil, nil, func(h *metal3v1alpha1.BareMetalHost) {
			h.Spec.CustomDeploy = &metal3v1alpha1.CustomDeploy{Method: "m"}
			h.Status.Provisioning.CustomDeploy = &metal3v1alpha1.CustomDeploy{Method: "m"}
		}), networkv1alpha1.NetworkTenant},
		{"custom deploy gone", host(metal3v1alpha1.StateProvisioned, nil, nil, func(h *metal3v1alpha1.BareMetalHost) {
			h.Status.Provisioning.CustomDeploy = &metal3v1alpha1.CustomDeploy{Method: "m"}
		}), networkv1alpha1.NetworkProvisioning},
	} {
		if got := NetworkOf(tc.host); got != tc.want {
			t.Errorf("%s: NetworkOf = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestParseNetworkConfiguration(t *testing.T) {
	for _, tc := range []struct {
		in      string
		entries int
		err     string
	}{
		{`[{"configurationRef":{"name":"web"},"nicHint":{"name":"eth0"}}]`, 1, ""},
		{`[{"configurationRef":{"name":"a"},"nicHint":{"mac":"aa:bb:cc:dd:ee:ff"}},{"configurationRef":{"name":"b"},"nicHint":{"name":"eth1","smartNIC":true}}]`, 2, ""},
		{`[]`, 0, ""},
		{`{"configurationRef":{"name":"web"}}`, 0, "not a JSON list"},
		{`[{"configurationRef":{},"nicHint":{"name":"eth0"}}]`, 0, "no configurationRef.name"},
		{`[{"configurationRef":{"name":"web"},"nicHint":{}}]`, 0, "neither nicHint.name nor nicHint.mac"},
	} {
		got, err := ParseNetworkConfiguration(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.in, err, tc.err)
		case tc.err == "" && len(got) != tc.entries:
			t.Errorf("%s: %d entries, want %d", tc.in, len(got), tc.entries)
		}
	}
}

func TestAttachmentConfiguration(t *testing.T) {
	for _, tc := range []struct {
		mode             string
		native           int
		allowed          []int
		mtu              int
		untagged         int
		vlans, errSubstr string
	}{
		{mode: "access", native: 100, untagged: 100},
		{mode: "", native: 100, untagged: 100},
		{mode: "trunk", allowed: []int{200, 201, 202, 300}, vlans: "200-202, 300"},
		{mode: "trunk", native: 5, allowed: []int{7}, untagged: 5, vlans: "7"},
		{mode: "hybrid", native: 10, allowed: []int{20, 21}, untagged: 10, vlans: "20-21"},
		{mode: "access", errSubstr: "takes nativeVLAN"},
		{mode: "access", native: 1, allowed: []int{2}, errSubstr: "no allowedVLANs"},
		{mode: "trunk", errSubstr: "takes allowedVLANs"},
		{mode: "hybrid", allowed: []int{2}, errSubstr: "takes nativeVLAN"},
		{mode: "trunk", allowed: []int{5000}, errSubstr: "5000 is not a VLAN id"},
		{mode: "access", native: 4095, errSubstr: "4095 is not a VLAN id"},
		{mode: "lag", native: 1, errSubstr: "none of access, trunk, hybrid"},
		{mode: "access", native: 1, mtu: 9000, errSubstr: "carry no MTU"},
	} {
		spec, err := AttachmentConfiguration(tc.mode, tc.native, tc.allowed, tc.mtu)
		if tc.errSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
				t.Errorf("%+v: error %v, want one saying %q", tc, err, tc.errSubstr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc, err)
			continue
		}
		untagged := 0
		if spec.UntaggedVLAN != nil {
			untagged = int(*spec.UntaggedVLAN)
		}
		if untagged != tc.untagged || string(spec.VLANs) != tc.vlans {
			t.Errorf("%+v: untagged %d vlans %q", tc, untagged, spec.VLANs)
		}
	}
}

func TestCarriage(t *testing.T) {
	web := &networkv1alpha1.ConfigurationRef{Name: "web", Namespace: "tenant"}
	port := func(link *networkv1alpha1.ConfigurationRef, state networkv1alpha1.SwitchPortState, held *networkv1alpha1.ConfigurationRef, ready metav1.ConditionStatus, reason string) *networkv1alpha1.SwitchPort {
		p := &networkv1alpha1.SwitchPort{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Generation: 2}}
		p.Spec.Configuration = link
		p.Status = networkv1alpha1.SwitchPortStatus{State: state, ConfigurationRef: held, ObservedGeneration: 2,
			Conditions: []metav1.Condition{{Type: networkv1alpha1.ConditionReady, Status: ready, Reason: reason}}}
		return p
	}
	stale := port(web, networkv1alpha1.StateActive, web, metav1.ConditionTrue, "Active")
	stale.Generation = 3
	for _, tc := range []struct {
		name          string
		port          *networkv1alpha1.SwitchPort
		want          *networkv1alpha1.ConfigurationRef
		ok            bool
		carries, fail string
	}{
		{"active on it", port(web, networkv1alpha1.StateActive, web, metav1.ConditionTrue, "Active"), web, true, "yes", ""},
		{"idle and clean", port(nil, networkv1alpha1.StateIdle, nil, metav1.ConditionTrue, "Idle"), nil, true, "yes", ""},
		{"not linked yet", port(nil, networkv1alpha1.StateIdle, nil, metav1.ConditionTrue, "Idle"), web, false, "linking", ""},
		{"configuring", port(web, networkv1alpha1.StateConfiguring, nil, metav1.ConditionFalse, "Configuring"), web, false, "Configuring", ""},
		{"spec not observed", stale, web, false, "Active", ""},
		{"active on another", port(web, networkv1alpha1.StateActive, &networkv1alpha1.ConfigurationRef{Name: "old", Namespace: "tenant"}, metav1.ConditionTrue, "Active"), web, false, "Active", ""},
		{"failed", port(web, networkv1alpha1.StateConfiguring, nil, metav1.ConditionFalse, "OutsideLimit"), web, false, "failed", "OutsideLimit: "},
	} {
		ok, carries, fail := carriage(tc.port, tc.want)
		if ok != tc.ok || carries != tc.carries || fail != tc.fail {
			t.Errorf("%s: carriage = %v %q %q, want %v %q %q", tc.name, ok, carries, fail, tc.ok, tc.carries, tc.fail)
		}
	}
}
