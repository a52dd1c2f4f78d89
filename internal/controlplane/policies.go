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

package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/controller/ipam"
)

// PolicyFiles are the admission policies config/default deploys beside the webhook
// configurations: the apiserver applies them itself, with no webhook server behind them.
var PolicyFiles = []string{"config/ipam/claim-finalizer-policy.yaml"}

// InstallPolicies creates the admission policies of PolicyFiles on the control plane at cfg
// and waits until the apiserver applies them, so that the first claim a test creates gets
// its finalizer from the policy as every later one does. The apiserver starts applying a new
// policy a moment after it is stored, not at once.
//
// Call it before the manager starts: the wait tells the policy's finalizer from the
// claim webhook's only while nothing answers the webhook (its failure is ignored).
func InstallPolicies(ctx context.Context, cfg *rest.Config, root string) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	for _, f := range PolicyFiles {
		objs, err := ReadObjects(filepath.Join(root, f))
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := c.Create(ctx, o); err != nil {
				return fmt.Errorf("%s: creating %s %s: %w", f, o.GetKind(), o.GetName(), err)
			}
		}
	}
	return waitForClaimFinalizer(ctx, c)
}

// claimProbes are a claim of each kind the claim-finalizer policy serves, and the
// finalizer it puts on them.
var claimProbes = []struct {
	apiVersion, kind, finalizer string
	spec                        map[string]any
}{
	{"ipam.metal3.io/v1alpha1", "IPClaim", ipam.ClaimFinalizer,
		map[string]any{"pool": map[string]any{"name": "probe"}}},
	{"ipam.cluster.x-k8s.io/v1beta2", "IPAddressClaim", ipam.CAPIClaimFinalizer,
		map[string]any{"poolRef": map[string]any{"apiGroup": "ipam.metal3.io", "kind": "IPPool", "name": "probe"}}},
}

// waitForClaimFinalizer dry-runs the create of a claim of each kind the control plane serves
// until the answer carries the finalizer.
func waitForClaimFinalizer(ctx context.Context, c client.Client) error {
	for _, p := range claimProbes {
		claim := &unstructured.Unstructured{Object: map[string]any{"spec": p.spec}}
		claim.SetAPIVersion(p.apiVersion)
		claim.SetKind(p.kind)
		if _, err := c.RESTMapper().RESTMapping(claim.GroupVersionKind().GroupKind(), claim.GroupVersionKind().Version); meta.IsNoMatchError(err) {
			continue
		} else if err != nil {
			return err
		}
		// A CRD the control plane just installed may still be answered with 503 for a moment.
		var last error
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			probe := claim.DeepCopy()
			probe.SetNamespace("default")
			probe.SetGenerateName("policy-probe-")
			if last = c.Create(ctx, probe, client.DryRunAll); last != nil {
				return false, nil
			}
			return slices.Contains(probe.GetFinalizers(), p.finalizer), nil
		})
		if err != nil {
			return fmt.Errorf("the claim-finalizer policy does not put %s on a new %s (last create: %v): %w", p.finalizer, p.kind, last, err)
		}
	}
	return nil
}
