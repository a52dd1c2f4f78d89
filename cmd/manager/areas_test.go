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
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/nodeslice"
	"github.com/rackwire/rackwire/internal/controlplane"
)

// A manager serving only node slices starts on an apiserver that has none of the switches',
// the Cluster API's or KubeVirt's CRDs (the areas that watch them are not set up), slices a
// Node's network, and leaves the Metal3 IPAM objects it finds alone: no finalizer on the pool
// or the claim, no address.
func TestServeOnlyNodeSlices(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh)")
	}
	// whereabouts' kinds, the NAD and IPAMClaim kinds, and Metal3 IPAM's (to see them left
	// alone); nothing of metal3.io, ipam.cluster.x-k8s.io or kubevirt.io.
	var crds []string
	for _, glob := range []string{"config/crd/bases/whereabouts.cni.cncf.io_*.yaml", "config/crd/bases/ipam.metal3.io_*.yaml", "config/crd/external/k8s.cni.cncf.io_*.yaml"} {
		files, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil || len(files) == 0 {
			t.Fatalf("no CRDs at %s: %v", glob, err)
		}
		crds = append(crds, files...)
	}
	env := &envtest.Environment{CRDDirectoryPaths: crds, ErrorIfCRDPathMissing: true}
	env.WebhookInstallOptions.LocalServingHost = "127.0.0.1"
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	ctx := context.Background()
	mgr, err := ctrl.NewManager(cfg, managerOptions(env))
	if err != nil {
		t.Fatal(err)
	}
	k8s := mgr.GetClient()
	direct, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		t.Fatal(err)
	}

	// Metal3 IPAM objects that the ipam area, were it served, would take at once.
	subnet := ipamv1alpha1.IPSubnetStr("192.168.10.0/24")
	pool := &ipamv1alpha1.IPPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "left-alone"},
		Spec:       ipamv1alpha1.IPPoolSpec{NamePrefix: "left-alone", Pools: []ipamv1alpha1.Pool{{Subnet: &subnet}}, Prefix: 24},
	}
	claim := &ipamv1alpha1.IPClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "left-alone-1"},
		Spec:       ipamv1alpha1.IPClaimSpec{Pool: corev1.ObjectReference{Name: pool.Name}},
	}
	for _, o := range []client.Object{pool, claim} {
		if err := direct.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	serve, err := parseServe("node-slices", areaNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := setupAreas(mgr, true, serve); err != nil {
		t.Fatalf("setting up only node slices without the other areas' CRDs: %v", err)
	}
	stop, err := controlplane.Run(ctx, mgr, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(time.Minute); err != nil {
			t.Error(err)
		}
	})

	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nodeslice.Namespace}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "serve-node-0"}},
		&nadv1.NetworkAttachmentDefinition{
			ObjectMeta: metav1.ObjectMeta{Namespace: nodeslice.Namespace, Name: "serve"},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"serve","type":"bridge","bridge":"br-serve",` +
				`"ipam":{"type":"whereabouts","range":"10.30.0.0/24","node_slice_size":"/26","network_name":"serve"}}`},
		},
	} {
		if err := direct.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	// The node-slices area runs: the Node gets its slice.
	sliced := &nodeslicev1alpha1.NodeSlicePool{}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: nodeslice.Namespace, Name: "serve"}, sliced); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, a := range sliced.Status.Allocations {
			if a.NodeName == "serve-node-0" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the node-slices area did not slice serve-node-0: %v (pool %+v)", err, sliced.Status)
	}

	// By now an ipam reconciler, had one started with the same cache, would have put its
	// finalizers on the pool and the claim it was given at start-up.
	if err := direct.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
		t.Fatal(err)
	}
	if err := direct.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
		t.Fatal(err)
	}
	if len(pool.Finalizers) != 0 || len(claim.Finalizers) != 0 || claim.Status.Address != nil {
		t.Fatalf("the ipam area is not served, but its objects were touched: pool finalizers %v, claim finalizers %v, claim status %+v",
			pool.Finalizers, claim.Finalizers, claim.Status)
	}
	addrs := &ipamv1alpha1.IPAddressList{}
	if err := direct.List(ctx, addrs); err != nil {
		t.Fatal(err)
	}
	if len(addrs.Items) != 0 {
		t.Fatalf("the ipam area is not served, but %d IPAddresses were made", len(addrs.Items))
	}
}

// areaCRDs are the CRDs each area watches: its own and those of the projects it works with
// (BMO's BareMetalHost for switches, KubeVirt's VMs for persistent IPs). The Cluster API IPAM
// kinds are optional to the ipam area, which serves them only when they are installed. Node
// slices need the IPAMClaim kind too: the IP reconciler restores the reservations of
// IPAMClaims' addresses.
var areaCRDs = map[string][]string{
	"ipam":           {"config/crd/bases/ipam.metal3.io_*.yaml"},
	"switches":       {"config/crd/bases/metal3.io_*.yaml", "test/crds/metal3.io_baremetalhosts.yaml"},
	"node-slices":    {"config/crd/bases/whereabouts.cni.cncf.io_*.yaml", "config/crd/external/k8s.cni.cncf.io_*.yaml"},
	"persistent-ips": {"config/crd/bases/whereabouts.cni.cncf.io_*.yaml", "config/crd/external/k8s.cni.cncf.io_*.yaml", "test/crds/kubevirt.io_*.yaml"},
}

// Each area, served alone, sets up and starts with only its own CRDs installed: an area that
// is off needs none of its kinds. (docs/deploying.md lists these CRDs.)
func TestEachAreaStartsWithOnlyItsCRDs(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$(hack/envtest-bins.sh)")
	}
	for _, name := range areaNames() {
		t.Run(name, func(t *testing.T) {
			var crds []string
			for _, glob := range areaCRDs[name] {
				files, err := filepath.Glob(filepath.Join(root, glob))
				if err != nil || len(files) == 0 {
					t.Fatalf("no CRDs at %s: %v", glob, err)
				}
				crds = append(crds, files...)
			}
			env := &envtest.Environment{CRDDirectoryPaths: crds, ErrorIfCRDPathMissing: true}
			env.WebhookInstallOptions.LocalServingHost = "127.0.0.1"
			cfg, err := env.Start()
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = env.Stop() }()
			mgr, err := ctrl.NewManager(cfg, managerOptions(env))
			if err != nil {
				t.Fatal(err)
			}
			if err := setupAreas(mgr, true, map[string]bool{name: true}); err != nil {
				t.Fatalf("setting up %s alone: %v", name, err)
			}
			stop, err := controlplane.Run(context.Background(), mgr, env)
			if err != nil {
				t.Fatalf("starting %s alone: %v", name, err)
			}
			if err := stop(time.Minute); err != nil {
				t.Fatalf("%s alone: %v", name, err)
			}
		})
	}
}

// managerOptions are controlplane's, for one of several managers of this test binary: each
// sets up the same controllers, whose names controller-runtime otherwise holds unique per
// process.
func managerOptions(env *envtest.Environment) ctrl.Options {
	o := controlplane.ManagerOptions(env)
	o.Controller.SkipNameValidation = ptr.To(true)
	return o
}
