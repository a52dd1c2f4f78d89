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

package deploy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

const managerAccount = "system:serviceaccount:" + operatorNS + ":rackwire-controller-manager"

// checkManagerSecrets acts as the manager's ServiceAccount, with config/default rendered and
// applied: it reads and holds a Secret in its own namespace, none in another, until the infra
// team applies config/switch-secrets there; it lists Secrets nowhere.
func checkManagerSecrets(ctx context.Context, t *testing.T, admin *rest.Config, c client.Client, kustomize, root string) {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: managerAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorNS, "system:authenticated"}}
	manager, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	secret := func(ns string) *corev1.Secret {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaf-creds"}, StringData: map[string]string{"password": "pw"}}
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	hold := func(s *corev1.Secret) error {
		cur := &corev1.Secret{}
		if err := manager.Get(ctx, client.ObjectKeyFromObject(s), cur); err != nil {
			return err
		}
		base := cur.DeepCopy()
		controllerutil.AddFinalizer(cur, "metal3.io/switch-in-use")
		return manager.Patch(ctx, cur, client.MergeFrom(base))
	}

	own, other, later := secret(operatorNS), secret("tenant-a"), secret("leaf-infra")
	if err := hold(own); err != nil {
		t.Errorf("the manager may read and hold a Secret in its own namespace, but: %v", err)
	}
	for _, s := range []*corev1.Secret{other, later} {
		if err := manager.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{}); !apierrors.IsForbidden(err) {
			t.Errorf("the manager may not read Secret %s/%s, but the apiserver answered %v", s.Namespace, s.Name, err)
		}
	}
	for _, ns := range []string{operatorNS, "tenant-a"} {
		if err := manager.List(ctx, &corev1.SecretList{}, client.InNamespace(ns)); !apierrors.IsForbidden(err) {
			t.Errorf("the manager may not list Secrets in %s, but the apiserver answered %v", ns, err)
		}
	}

	// The infra team's grant for one more namespace, as the kustomization documents it.
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, filepath.Join(root, "config", "switch-secrets"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("namespace: leaf-infra\nresources:\n- "+rel+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	apply(ctx, t, c, "config/switch-secrets in leaf-infra", renderAbs(t, kustomize, dir))
	// The authorizer sees a new Role within moments, not at once.
	err = hold(later)
	for deadline := time.Now().Add(10 * time.Second); apierrors.IsForbidden(err) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		err = hold(later)
	}
	if err != nil {
		t.Errorf("with config/switch-secrets applied in leaf-infra the manager may hold its Secret, but: %v", err)
	}
	if err := manager.Get(ctx, client.ObjectKeyFromObject(other), &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Errorf("the grant in leaf-infra lets the manager read Secret tenant-a/leaf-creds: %v", err)
	}
	if err := manager.List(ctx, &corev1.SecretList{}, client.InNamespace("leaf-infra")); !apierrors.IsForbidden(err) {
		t.Errorf("the grant in leaf-infra lets the manager list its Secrets: %v", err)
	}
}
