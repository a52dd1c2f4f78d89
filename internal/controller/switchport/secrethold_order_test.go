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

package switchport_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switches"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	networkwebhooks "github.com/rackwire/rackwire/webhooks/network/v1alpha1"
)

// A manager stopped between holding a Secret and recording the hold left a finalizer that no
// AnsibleSwitch status remembered (seen in CI as a flake of the review 27b test, whose first
// manager was stopped in that gap): once the namespace's grant was withdrawn, nothing could
// ever release it. The hold must be recorded first, so a status write that fails leaves the
// Secret untouched.
func TestSecretHoldIsRecordedBeforeTheSecretIsHeld(t *testing.T) {
	env, cfg := ownControlPlane(t)
	ctx := t.Context()

	// Only the webhooks run, so the Switch can be created; this test is the one reconciler.
	opts := controlplane.ManagerOptions(env)
	opts.Controller.SkipNameValidation = ptr.To(true)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := networkwebhooks.Setup(mgr); err != nil {
		t.Fatal(err)
	}
	stop, err := controlplane.Run(ctx, mgr, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(30 * time.Second) })

	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "secret-hold-order"
	key := client.ObjectKey{Namespace: ns, Name: "leaf"}
	for _, o := range leafWithSecret(ns, "10.9.202.1") {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	statusLost := errors.New("the manager stops before its status write lands")
	failing := interceptor.NewClient(c, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if sub == "status" {
				return statusLost
			}
			return cl.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	})
	secrets := switchport.SecretScope{Reader: c, Namespaces: []string{ns}}
	req := ctrl.Request{NamespacedName: key}
	if _, err := (&switches.ProviderReconciler{Client: failing, Secrets: secrets}).Reconcile(ctx, req); !errors.Is(err, statusLost) {
		t.Fatalf("reconcile with its status write lost: err %v, want %v", err, statusLost)
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(s.Finalizers, switches.InUseFinalizer) {
		t.Fatal("the Secret carries the manager's finalizer while no AnsibleSwitch status records the hold")
	}

	if _, err := (&switches.ProviderReconciler{Client: c, Secrets: secrets}).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	a := &networkv1alpha1.AnsibleSwitch{}
	if err := c.Get(ctx, key, a); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	if a.Status.HeldSecret != "leaf" || !slices.Contains(s.Finalizers, switches.InUseFinalizer) {
		t.Fatalf("after a reconcile that lands: status.heldSecret %q, Secret finalizers %v; want the hold recorded and held",
			a.Status.HeldSecret, s.Finalizers)
	}
}
