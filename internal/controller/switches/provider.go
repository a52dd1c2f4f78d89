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

package switches

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
)

// +kubebuilder:rbac:groups=metal3.io,resources=ansibleswitches,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=ansibleswitches/status,verbs=get;update;patch
// The one Secret an AnsibleSwitch names is read when a run needs it and held with a
// finalizer while the switch is in use; no Secret is ever listed or watched. The manager has
// no right on Secrets in its ClusterRole: the infra team grants get/update/patch per namespace
// (config/rbac/switch_secrets_role.yaml for the manager's own, config/switch-secrets for others).

// InUseFinalizer holds an AnsibleSwitch and its credentials Secret while a Switch uses them,
// so that deleting the infra objects together still leaves the credentials to clean the
// ports with.
const InUseFinalizer = "metal3.io/switch-in-use"

// ProviderReconciler keeps InUseFinalizer on the AnsibleSwitches that Switches use and on
// their credentials Secrets.
type ProviderReconciler struct {
	client.Client
	// Secrets reads Secrets without a cache.
	Secrets client.Reader
}

// Reconcile holds or releases one AnsibleSwitch and its Secret.
func (r *ProviderReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	a := &networkv1alpha1.AnsibleSwitch{}
	if err := r.Get(ctx, req.NamespacedName, a); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	inUse := len(switchport.SwitchesOfProvider(ctx, r.Client, a.Namespace, a.Name)) > 0
	base := a.DeepCopy()
	held := a.Status.HeldSecret
	want := ""
	if inUse {
		want = a.Spec.CredentialsSecret.Name
	}
	var result ctrl.Result
	keep := want
	if held != "" && held != want && !r.secretInUse(ctx, a, held) {
		_, err := r.setSecretFinalizer(ctx, a.Namespace, held, false)
		switch {
		case errors.Is(err, errNotGranted):
			// The namespace is no longer granted: the finalizer stays on the Secret until it
			// is granted again (or the infra team removes it by hand), so the hold is not
			// forgotten; look again later.
			if want == "" {
				keep = held
			}
			result.RequeueAfter = time.Minute
		case err != nil:
			return ctrl.Result{}, err
		}
	}
	// The hold is recorded before the Secret gets its finalizer: a manager stopped between the
	// two writes would otherwise leave a finalizer no status remembers, which a manager whose
	// grant on the namespace has since been withdrawn could never find again.
	a.Status.HeldSecret = keep
	if !equality.Semantic.DeepEqual(base.Status, a.Status) {
		if err := r.Status().Patch(ctx, a, client.MergeFrom(base)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if inUse {
		found, err := r.setSecretFinalizer(ctx, a.Namespace, want, true)
		if errors.Is(err, errNotGranted) {
			found, err = false, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if !found {
			// No Secret watch: look again for the Secret the infra team has yet to create.
			result.RequeueAfter = 15 * time.Second
		}
	}
	base = a.DeepCopy()
	if inUse {
		controllerutil.AddFinalizer(a, InUseFinalizer)
	} else {
		controllerutil.RemoveFinalizer(a, InUseFinalizer)
	}
	if equality.Semantic.DeepEqual(base.Finalizers, a.Finalizers) {
		return result, nil
	}
	return result, client.IgnoreNotFound(r.Patch(ctx, a, client.MergeFrom(base)))
}

// secretInUse reports whether another AnsibleSwitch in use still logs in with the Secret.
func (r *ProviderReconciler) secretInUse(ctx context.Context, self *networkv1alpha1.AnsibleSwitch, secret string) bool {
	list := &networkv1alpha1.AnsibleSwitchList{}
	if err := r.List(ctx, list, client.InNamespace(self.Namespace)); err != nil {
		return true
	}
	for _, a := range list.Items {
		if a.Name != self.Name && a.Spec.CredentialsSecret.Name == secret &&
			len(switchport.SwitchesOfProvider(ctx, r.Client, a.Namespace, a.Name)) > 0 {
			return true
		}
	}
	return false
}

// errNotGranted is a Secret the manager may not read or write (its namespace is not granted).
var errNotGranted = errors.New("secret namespace not granted")

// setSecretFinalizer adds or removes InUseFinalizer on a Secret, touching nothing else. It
// reports whether the Secret exists.
func (r *ProviderReconciler) setSecretFinalizer(ctx context.Context, namespace, name string, hold bool) (bool, error) {
	s := &corev1.Secret{}
	if err := r.Secrets.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		if errors.Is(err, switchport.ErrSecretNamespace) || apierrors.IsForbidden(err) {
			// Not granted (yet, or any more): the Switch says what to grant.
			return false, fmt.Errorf("%w: %w", errNotGranted, err)
		}
		return false, client.IgnoreNotFound(err)
	}
	if controllerutil.ContainsFinalizer(s, InUseFinalizer) == hold {
		return true, nil
	}
	patch := &corev1.Secret{}
	patch.Namespace, patch.Name, patch.ResourceVersion = s.Namespace, s.Name, s.ResourceVersion
	patch.Finalizers = append([]string(nil), s.Finalizers...)
	base := patch.DeepCopy()
	if hold {
		controllerutil.AddFinalizer(patch, InUseFinalizer)
	} else {
		controllerutil.RemoveFinalizer(patch, InUseFinalizer)
	}
	err := r.Patch(ctx, patch, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return true, err
}
