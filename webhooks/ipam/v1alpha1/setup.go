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

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rackwire/rackwire/internal/controller/ipam"
)

// Setup registers the webhooks of every ipam.metal3.io kind.
func Setup(mgr ctrl.Manager) error {
	// The IPPool validator finds a pool's addresses through the reconcilers' index; the
	// webhooks may run without the reconcilers.
	capi := ipam.CAPIInstalled(mgr.GetRESTMapper())
	if err := ipam.RegisterIndexes(context.Background(), mgr.GetFieldIndexer(), capi); err != nil {
		return err
	}
	if err := setupIPPool(mgr, capi); err != nil {
		return err
	}
	for _, setup := range []func(ctrl.Manager) error{setupIPClaim, setupIPAddress} {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return nil
}
