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
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switches"
	"github.com/rackwire/rackwire/internal/controller/switchport"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	"github.com/rackwire/rackwire/internal/switchdriver/fake"
	networkwebhooks "github.com/rackwire/rackwire/webhooks/network/v1alpha1"
)

// TestSecretNamespaces runs a manager granted Secrets in one namespace only: a Switch whose
// credentials live there becomes Ready; one whose credentials live elsewhere says which
// namespace and what the infra team grants, and its Secret is left untouched (no finalizer).
func TestSecretNamespaces(t *testing.T) {
	env, cfg := ownControlPlane(t)
	ctx := t.Context()
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	opts := controlplane.ManagerOptions(env)
	// The package's suite registers the same controller names in this process.
	opts.Controller.SkipNameValidation = ptr.To(true)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	fakes := fake.NewRegistry()
	if err := switches.SetupWith(mgr, switchport.Options{
		Drivers: fakes.Factory, Window: 200 * time.Millisecond, DriverTimeout: 3 * time.Second,
		SecretNamespaces: []string{"leaf-infra"},
	}); err != nil {
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

	for i, ns := range []string{"leaf-infra", "other-infra"} {
		for _, o := range leafWithSecret(ns, fmt.Sprintf("10.9.200.%d", i+1)) {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	ready := func(ns string) string {
		sw := &networkv1alpha1.Switch{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "leaf"}, sw); err != nil {
			return err.Error()
		}
		if cond := meta.FindStatusCondition(sw.Status.Conditions, networkv1alpha1.ConditionReady); cond != nil {
			return fmt.Sprintf("%s/%s: %s", cond.Status, cond.Reason, cond.Message)
		}
		return ""
	}
	wait := func(ns, prefix string) string {
		t.Helper()
		got := ""
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if got = ready(ns); strings.HasPrefix(got, prefix) {
				return got
			}
		}
		t.Fatalf("Switch %s/leaf: Ready is %q, want %s", ns, got, prefix)
		return ""
	}

	wait("leaf-infra", "True/")
	msg := wait("other-infra", "False/"+switchport.ReasonCredentialsNotGranted)
	for _, want := range []string{`namespace "other-infra"`, "--switch-secret-namespaces", "config/switch-secrets"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the condition does not say %q: %s", want, msg)
		}
	}
	held := func(ns string) bool {
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "leaf"}, s); err != nil {
			t.Fatal(err)
		}
		return len(s.Finalizers) > 0
	}
	if !held("leaf-infra") {
		t.Error("the granted Secret is not held while its Switch uses it")
	}
	if held("other-infra") {
		t.Error("the manager wrote a Secret in a namespace it was not granted")
	}
}
