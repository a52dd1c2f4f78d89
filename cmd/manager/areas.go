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

package main

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rackwire/rackwire/internal/controller/hostlink"
	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler"
	"github.com/rackwire/rackwire/internal/controller/nodeslice"
	"github.com/rackwire/rackwire/internal/controller/switches"
	capiipamwebhooks "github.com/rackwire/rackwire/webhooks/capiipam/v1beta2"
	ipamwebhooks "github.com/rackwire/rackwire/webhooks/ipam/v1alpha1"
	ipamclaimwebhooks "github.com/rackwire/rackwire/webhooks/ipamclaims/v1alpha1"
	kubevirtwebhooks "github.com/rackwire/rackwire/webhooks/kubevirt/v1"
	networkwebhooks "github.com/rackwire/rackwire/webhooks/network/v1alpha1"
	nodeslicewebhooks "github.com/rackwire/rackwire/webhooks/nodeslice/v1alpha1"
)

// area is one part of the operator (IPAM, switches, node slices, persistent IPs): the
// reconcilers it runs and the admission webhooks it serves. Webhooks are registered apart so
// that `--webhooks=false` (make run against a cluster without certificates) can skip them.
type area struct {
	name       string
	reconcile  setupFunc
	admissions []setupFunc
}

type setupFunc func(ctrl.Manager) error

// Every area reports through Events.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// areas is the one place where parts of the operator are wired in: an issue that adds a
// part adds its line here and nothing else in cmd/manager.
var areas = []area{
	{name: "ipam", reconcile: ipam.Setup, admissions: []setupFunc{ipamwebhooks.Setup, capiipamwebhooks.Setup}},
	{name: "switches", reconcile: switches.Setup, admissions: []setupFunc{networkwebhooks.Setup}},
	{name: "hostlink", reconcile: hostlink.Setup},
	{name: "node slices", reconcile: nodeslice.Setup, admissions: []setupFunc{nodeslicewebhooks.Setup}},
	{name: "persistent IPs", reconcile: ipamclaim.Setup, admissions: []setupFunc{kubevirtwebhooks.Setup, ipamclaimwebhooks.Setup}},
	{name: "ip reconciler", reconcile: ipreconciler.Setup},
}

// setupAreas registers every area's reconcilers and, when asked, its webhooks.
func setupAreas(mgr ctrl.Manager, webhooks bool) error {
	for _, a := range areas {
		if a.reconcile != nil {
			if err := a.reconcile(mgr); err != nil {
				return fmt.Errorf("setting up %s reconcilers: %w", a.name, err)
			}
		}
		if !webhooks {
			continue
		}
		for _, setup := range a.admissions {
			if err := setup(mgr); err != nil {
				return fmt.Errorf("setting up %s webhooks: %w", a.name, err)
			}
		}
	}
	return nil
}
