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
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switches"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	"github.com/rackwire/rackwire/internal/switchdriver/fake"
	networkwebhooks "github.com/rackwire/rackwire/webhooks/network/v1alpha1"
)

// The manager holds a Switch's credentials Secret with its in-use finalizer. The infra team
// then drops the namespace from --switch-secret-namespaces (a restart with another flag) and
// retires the Switch: the manager cannot release the Secret now, and it used to forget that
// it held it (the AnsibleSwitch's status.heldSecret emptied), so granting the namespace again
// released nothing and the Secret could never be deleted without removing the finalizer by
// hand. The hold must be remembered, and released once the namespace is granted again.
func TestSecretHeldInANamespaceNoLongerGrantedIsReleasedOnceGrantedAgain(t *testing.T) {
	env, cfg := ownControlPlane(t)
	ctx := t.Context()
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "review27b-infra"
	om := metav1.ObjectMeta{Namespace: ns, Name: "leaf"}
	key := client.ObjectKey{Namespace: ns, Name: "leaf"}

	stop := startSecretManager(t, env, cfg, []string{ns})
	for _, o := range leafWithSecret(ns, "10.9.201.1") {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	secretHeld := func() bool {
		s := &corev1.Secret{}
		if err := c.Get(ctx, key, s); err != nil {
			t.Fatal(err)
		}
		return slices.Contains(s.Finalizers, switches.InUseFinalizer)
	}
	eventually(t, "the Secret is held while its Switch uses it", secretHeld)
	stop()

	// The namespace is no longer granted; the Switch is retired.
	stop = startSecretManager(t, env, cfg, []string{"review27b-elsewhere"})
	if err := c.Delete(ctx, &networkv1alpha1.Switch{ObjectMeta: om}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Switch is gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, key, &networkv1alpha1.Switch{}))
	})
	eventually(t, "the AnsibleSwitch is no longer in use", func() bool {
		a := &networkv1alpha1.AnsibleSwitch{}
		if err := c.Get(ctx, key, a); err != nil {
			t.Fatal(err)
		}
		return !slices.Contains(a.Finalizers, switches.InUseFinalizer)
	})
	if !secretHeld() {
		t.Fatal("the manager released a Secret in a namespace it was not granted")
	}
	a := &networkv1alpha1.AnsibleSwitch{}
	if err := c.Get(ctx, key, a); err != nil {
		t.Fatal(err)
	}
	if a.Status.HeldSecret != "leaf" {
		t.Errorf("status.heldSecret is %q while the Secret still carries the manager's finalizer; want %q", a.Status.HeldSecret, "leaf")
	}
	stop()

	// Granted again: the manager lets the Secret go.
	stop = startSecretManager(t, env, cfg, []string{ns})
	defer stop()
	eventually(t, "the Secret is released once its namespace is granted again", func() bool { return !secretHeld() })
}

func startSecretManager(t *testing.T, env *envtest.Environment, cfg *rest.Config, namespaces []string) func() {
	t.Helper()
	opts := controlplane.ManagerOptions(env)
	// The package's suite, and this test's earlier managers, register the same controller names.
	opts.Controller.SkipNameValidation = ptr.To(true)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := switches.SetupWith(mgr, switchport.Options{
		Drivers: fake.NewRegistry().Factory, Window: 200 * time.Millisecond, DriverTimeout: 3 * time.Second,
		SecretNamespaces: namespaces,
	}); err != nil {
		t.Fatal(err)
	}
	if err := networkwebhooks.Setup(mgr); err != nil {
		t.Fatal(err)
	}
	stop, err := controlplane.Run(t.Context(), mgr, env)
	if err != nil {
		t.Fatal(err)
	}
	return func() { _ = stop(30 * time.Second) }
}

// eventually polls cond; the deadline only stops a test whose outcome never comes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}
