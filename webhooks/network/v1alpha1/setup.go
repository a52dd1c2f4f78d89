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

	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/switchport"
)

var (
	kindSwitch        = networkv1alpha1.GroupVersion.WithKind("Switch").GroupKind()
	kindAnsibleSwitch = networkv1alpha1.GroupVersion.WithKind("AnsibleSwitch").GroupKind()
	kindSwitchPort    = networkv1alpha1.GroupVersion.WithKind("SwitchPort").GroupKind()
	kindConfiguration = networkv1alpha1.GroupVersion.WithKind("SwitchPortConfiguration").GroupKind()
	kindLimit         = networkv1alpha1.GroupVersion.WithKind("SwitchResourceLimit").GroupKind()
	kindHostLink      = networkv1alpha1.GroupVersion.WithKind("HostLink").GroupKind()
)

// Setup registers the webhooks of the metal3.io switch kinds.
func Setup(mgr ctrl.Manager) error {
	// The validators read through the API, not the cache: a limit created a moment ago
	// must already bound the next configuration. The SwitchPort webhook, on the path of
	// every link, reads the cache first (see SwitchPortWebhook) through the indexes the
	// state machine registers too.
	if err := switchport.IndexFields(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	r := mgr.GetAPIReader()
	hooks := []error{
		ctrl.NewWebhookManagedBy(mgr, &networkv1alpha1.Switch{}).WithValidator(SwitchWebhook{Reader: r, Reviewer: mgr.GetClient()}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &networkv1alpha1.AnsibleSwitch{}).WithValidator(AnsibleSwitchWebhook{Reader: r, Reviewer: mgr.GetClient()}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &networkv1alpha1.SwitchPort{}).WithValidator(SwitchPortWebhook{Reader: r, Client: mgr.GetClient()}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &networkv1alpha1.SwitchPortConfiguration{}).WithValidator(ConfigurationWebhook{Reader: r}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &networkv1alpha1.SwitchResourceLimit{}).WithValidator(LimitWebhook{Reader: r}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &networkv1alpha1.HostLink{}).WithValidator(HostLinkWebhook{Reader: r}).Complete(),
	}
	mgr.GetWebhookServer().Register("/mutate-metal3-io-v1alpha1-baremetalhost",
		&webhook.Admission{Handler: HostHoldWebhook{Reader: r, Decoder: admission.NewDecoder(mgr.GetScheme())}})
	mgr.GetWebhookServer().Register("/validate-metal3-io-v1alpha1-baremetalhost-delete",
		&webhook.Admission{Handler: HostDeleteWebhook{Reader: r, Writer: mgr.GetClient(), Decoder: admission.NewDecoder(mgr.GetScheme())}})
	for _, err := range hooks {
		if err != nil {
			return err
		}
	}
	return nil
}

func invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.NewInvalid(gk, name, errs)
}
