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

// area is one part of the operator, named as `--serve` names it: the reconcilers it runs and
// the admission webhooks it serves. Webhooks are registered apart so that `--webhooks=false`
// (make run against a cluster without certificates) can skip them. An area that is not
// served registers nothing: none of its kinds is watched, so its CRDs need not be installed.
type area struct {
	name       string
	reconciles []setupFunc
	admissions []setupFunc
}

type setupFunc func(ctrl.Manager) error

// Every area reports through Events.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// areas is the one place where parts of the operator are wired in: an issue that adds a
// part adds it to an area here and nothing else in cmd/manager. The release components
// (config/release) gate each area's webhook configurations on the same names.
var areas = []area{
	// ipam.metal3.io pools, claims and addresses, and the Cluster API IPAM contract's
	// IPAddressClaims of those pools: one allocator serves both, so they are one area.
	{name: "ipam", reconciles: []setupFunc{ipam.Setup}, admissions: []setupFunc{ipamwebhooks.Setup, capiipamwebhooks.Setup}},
	// metal3.io switches, their ports, and the BareMetalHosts wired to them through HostLinks:
	// one webhook package guards both.
	{name: "switches", reconciles: []setupFunc{switches.Setup, hostlink.Setup}, admissions: []setupFunc{networkwebhooks.Setup}},
	// whereabouts.cni.cncf.io node slices and the reaping of the CNI plugin's records.
	{name: "node-slices", reconciles: []setupFunc{nodeslice.Setup, ipreconciler.Setup}, admissions: []setupFunc{nodeslicewebhooks.Setup}},
	// k8s.cni.cncf.io IPAMClaims of KubeVirt VMs and their launcher pods.
	{name: "persistent-ips", reconciles: []setupFunc{ipamclaim.Setup}, admissions: []setupFunc{kubevirtwebhooks.Setup, ipamclaimwebhooks.Setup}},
}

// areaNames lists the areas in the order they are wired.
func areaNames() []string {
	names := make([]string, len(areas))
	for i, a := range areas {
		names[i] = a.name
	}
	return names
}

// setupAreas registers the reconcilers of every area in serve and, when asked, its webhooks.
func setupAreas(mgr ctrl.Manager, webhooks bool, serve map[string]bool) error {
	for _, a := range areas {
		if !serve[a.name] {
			continue
		}
		for _, setup := range a.reconciles {
			if err := setup(mgr); err != nil {
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
