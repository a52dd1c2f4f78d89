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

package switchport

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// driverFor resolves a Switch, its provider and credentials into a Driver; a failure keeps
// the port in its state, retrying with backoff. The tenant sees the reason; the infra team
// sees which object is missing.
func (r *Reconciler) driverFor(ctx context.Context, m *machine, sw *networkv1alpha1.Switch, state networkv1alpha1.SwitchPortState) (switchdriver.Driver, *outcome) {
	m.driven = sw
	d, provider, reason, err := Resolve(ctx, r.Client, r.Secrets, sw, r.Drivers)
	m.provider = provider
	if err != nil {
		return nil, &outcome{next: state, reason: reason, warn: true, retry: true, detail: err.Error(),
			message: fmt.Sprintf("the provider of Switch %s/%s cannot drive the switch (%s); the infra team sees why on the Switch", sw.Namespace, sw.Name, reason)}
	}
	return d, nil
}

// Resolve builds the Driver of a Switch, reading the credentials fresh each time, so a
// rotated Secret is used by the next driver call. The reason names what is missing; the Switch
// reconciler reports the same reasons on the Switch. The AnsibleSwitch is returned when found.
func Resolve(ctx context.Context, c, secrets client.Reader, sw *networkv1alpha1.Switch, drivers switchdriver.Factory) (switchdriver.Driver, *networkv1alpha1.AnsibleSwitch, string, error) {
	if sw.Spec.Provider.Kind != "AnsibleSwitch" {
		return nil, nil, ReasonProviderNotFound, fmt.Errorf("provider kind %q is not supported", sw.Spec.Provider.Kind)
	}
	a := &networkv1alpha1.AnsibleSwitch{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: sw.Namespace, Name: sw.Spec.Provider.Name}, a); err != nil {
		return nil, nil, ReasonProviderNotFound, fmt.Errorf("AnsibleSwitch %s/%s: %w", sw.Namespace, sw.Spec.Provider.Name, err)
	}
	secret := &corev1.Secret{}
	err := secrets.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.CredentialsSecret.Name}, secret)
	if errors.Is(err, ErrSecretNamespace) || apierrors.IsForbidden(err) {
		return nil, a, ReasonCredentialsNotGranted, fmt.Errorf("credentials Secret %s/%s: the manager may not read Secrets in namespace %q; "+
			"the infra team grants it: add %q to the manager's --switch-secret-namespaces and apply config/switch-secrets "+
			"(a Role and RoleBinding for the manager's ServiceAccount) in namespace %q", a.Namespace, a.Spec.CredentialsSecret.Name,
			a.Namespace, a.Namespace, a.Namespace)
	}
	if err != nil {
		return nil, a, ReasonCredentialsNotFound, fmt.Errorf("credentials Secret %s/%s: %w", a.Namespace, a.Spec.CredentialsSecret.Name, err)
	}
	d, err := drivers(a, secret)
	switch {
	case errors.Is(err, switchdriver.ErrUnavailable):
		return nil, a, ReasonDriverUnavailable, err
	case errors.Is(err, switchdriver.ErrCredentials):
		return nil, a, ReasonCredentialsNotFound, err
	}
	if err != nil {
		return nil, a, ReasonProviderNotFound, fmt.Errorf("AnsibleSwitch %s/%s: %w", a.Namespace, a.Name, err)
	}
	return d, a, "", nil
}
