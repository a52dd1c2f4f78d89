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
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// NetworkOf is what the host's ports must carry for what BMO does next. Every state that may
// boot the ramdisk (registering, inspecting, preparing, provisioning, deprovisioning, and the
// states in between) needs the provisioning network; a provisioned host whose image is gone
// is about to deprovision, so it needs it too, before BMO starts.
func NetworkOf(host *metal3v1alpha1.BareMetalHost) networkv1alpha1.HostNetwork {
	if detached(host) {
		return networkv1alpha1.NetworkClean
	}
	if !host.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(host, metal3v1alpha1.BareMetalHostFinalizer) {
		return networkv1alpha1.NetworkClean // BMO is done with the host
	}
	switch host.Status.Provisioning.State {
	case metal3v1alpha1.StateExternallyProvisioned:
		if host.DeletionTimestamp.IsZero() {
			return networkv1alpha1.NetworkTenant
		}
	case metal3v1alpha1.StateProvisioned:
		if host.DeletionTimestamp.IsZero() && !cancelled(host) {
			return networkv1alpha1.NetworkTenant
		}
	case metal3v1alpha1.StateDeleting, metal3v1alpha1.StatePoweringOffBeforeDelete:
		return networkv1alpha1.NetworkClean
	}
	return networkv1alpha1.NetworkProvisioning
}

// detached hosts are out of BMO's hands (its detached annotation or status): their ports are
// cleaned, as for a deleted host.
func detached(host *metal3v1alpha1.BareMetalHost) bool {
	if _, ok := host.Annotations[metal3v1alpha1.DetachedAnnotation]; ok {
		return true
	}
	return host.Status.OperationalStatus == metal3v1alpha1.OperationalStatusDetached
}

// cancelled is BMO's own test (provisioningCancelled in its state machine) for a provisioned
// host that it will deprovision on its next reconcile: the image or custom deploy changed or
// went away.
func cancelled(host *metal3v1alpha1.BareMetalHost) bool {
	spec, st := host.Spec, host.Status.Provisioning
	if spec.CustomDeploy != nil && spec.CustomDeploy.Method != "" {
		if st.CustomDeploy != nil && st.CustomDeploy.Method != "" && spec.CustomDeploy.Method != st.CustomDeploy.Method {
			return true
		}
		return st.Image.URL != "" && (spec.Image == nil || spec.Image.URL != st.Image.URL)
	}
	if st.CustomDeploy != nil && st.CustomDeploy.Method != "" {
		return true
	}
	if spec.Image == nil || spec.Image.URL == "" {
		return true
	}
	return st.Image.URL != "" && spec.Image.URL != st.Image.URL
}
