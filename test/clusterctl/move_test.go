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

package clusterctl

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/cluster"
	ctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	capiipamwebhooks "github.com/rackwire/rackwire/webhooks/capiipam/v1beta2"
	ipamwebhooks "github.com/rackwire/rackwire/webhooks/ipam/v1alpha1"
)

const (
	moveNS      = "tenant-a"
	moveCluster = "workload-1"
	movePool    = "provisioning"
)

// managementCluster is one kube-apiserver with rackwire's IPAM running against it, as on a
// management cluster where clusterctl init installed it.
type managementCluster struct {
	k8s        client.Client
	kubeconfig string
}

func startManagement(t *testing.T, name string) *managementCluster {
	t.Helper()
	ctx := context.Background()
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	env, err := controlplane.New(root)
	if err != nil {
		t.Fatal(err)
	}
	env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, filepath.Join("testdata", "crd"))
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	if err := controlplane.InstallPolicies(ctx, cfg, root); err != nil {
		t.Fatal(err)
	}
	sch := scheme.New()
	if err := apiextensionsv1.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	// clusterctl init labels the core provider's CRDs, the Cluster API IPAM ones among them.
	for _, crd := range []string{"ipaddressclaims.ipam.cluster.x-k8s.io", "ipaddresses.ipam.cluster.x-k8s.io"} {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: crd}, c); err != nil {
			t.Fatal(err)
		}
		c.Labels = map[string]string{"clusterctl.cluster.x-k8s.io": "", "cluster.x-k8s.io/provider": "cluster-api"}
		if err := k8s.Update(ctx, c); err != nil {
			t.Fatal(err)
		}
	}

	opts := controlplane.ManagerOptions(env)
	// Two managers of the same controllers run in this process.
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, setup := range []func(ctrl.Manager) error{ipam.Setup, ipamwebhooks.Setup, capiipamwebhooks.Setup} {
		if err := setup(mgr); err != nil {
			t.Fatal(err)
		}
	}
	stop, err := controlplane.Run(ctx, mgr, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(60 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return &managementCluster{k8s: k8s, kubeconfig: writeKubeconfig(t, name, cfg)}
}

func writeKubeconfig(t *testing.T, name string, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: moveNS}
	kc.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// claimAddr is what a claim holds: its IPAddress's name and address.
type claimAddr struct{ name, address string }

// clusterctl move carries a Cluster's pool with its Metal3 IPClaims, Cluster API
// IPAddressClaims and their IPAddresses to another management cluster where rackwire runs:
// every claim keeps exactly its address there, no address is made anew or lost, the pool's
// status counts them, and nothing is left in the source.
//
// The Metal3 claims belong to the Cluster by their cluster-name label and the pool by its
// spec.clusterName, and move because their kinds are labelled for it; the Cluster API
// claims are owned by the Cluster, standing in for the infrastructure machines that own
// them under a real provider.
func TestMoveKeepsEveryAddress(t *testing.T) {
	ctx := context.Background()
	src := startManagement(t, "source")
	dst := startManagement(t, "target")

	mustCreate(t, src.k8s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: moveNS}})
	capiCluster := &unstructured.Unstructured{}
	capiCluster.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	capiCluster.SetKind("Cluster")
	capiCluster.SetNamespace(moveNS)
	capiCluster.SetName(moveCluster)
	_ = unstructured.SetNestedField(capiCluster.Object, false, "spec", "paused")
	mustCreate(t, src.k8s, capiCluster)
	// clusterctl moves only a provisioned Cluster.
	_ = unstructured.SetNestedField(capiCluster.Object, true, "status", "initialization", "infrastructureProvisioned")
	_ = unstructured.SetNestedSlice(capiCluster.Object, []any{map[string]any{
		"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}, "status", "conditions")
	if err := src.k8s.Status().Update(ctx, capiCluster); err != nil {
		t.Fatal(err)
	}

	pool := &ipamv1alpha1.IPPool{ObjectMeta: metav1.ObjectMeta{Namespace: moveNS, Name: movePool}}
	pool.Spec.ClusterName = ptr.To(moveCluster)
	pool.Spec.NamePrefix = "prov"
	pool.Spec.Prefix = 24
	pool.Spec.Pools = []ipamv1alpha1.Pool{{Start: ptr.To(ipamv1alpha1.IPAddressStr("10.20.0.10")), End: ptr.To(ipamv1alpha1.IPAddressStr("10.20.0.60"))}}
	mustCreate(t, src.k8s, pool)

	const metal3Claims, capiClaims = 4, 3
	for i := range metal3Claims {
		c := &ipamv1alpha1.IPClaim{ObjectMeta: metav1.ObjectMeta{Namespace: moveNS, Name: fmt.Sprintf("m3-%d", i),
			Labels: map[string]string{ipam.ClusterNameLabel: moveCluster}}}
		c.Spec.Pool.Name = movePool
		mustCreate(t, src.k8s, c)
	}
	for i := range capiClaims {
		c := &capiipamv1beta2.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Namespace: moveNS, Name: fmt.Sprintf("capi-%d", i),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: moveCluster, UID: capiCluster.GetUID()}}}}
		c.Spec.ClusterName = moveCluster
		c.Spec.PoolRef = capiipamv1beta2.IPPoolReference{APIGroup: ipamv1alpha1.GroupVersion.Group, Kind: "IPPool", Name: movePool}
		mustCreate(t, src.k8s, c)
	}
	// A pool of no Cluster, with claims of none: clusterctl does not pause them, so the pool
	// is paused by hand for the move, as docs/operating.md says.
	standalone := &ipamv1alpha1.IPPool{ObjectMeta: metav1.ObjectMeta{Namespace: moveNS, Name: "standalone"}}
	standalone.Spec.NamePrefix = "sa"
	standalone.Spec.Prefix = 24
	standalone.Spec.Pools = []ipamv1alpha1.Pool{{Start: ptr.To(ipamv1alpha1.IPAddressStr("10.30.0.10")), End: ptr.To(ipamv1alpha1.IPAddressStr("10.30.0.60"))}}
	mustCreate(t, src.k8s, standalone)
	const standaloneClaims = 2
	for i := range standaloneClaims {
		c := &ipamv1alpha1.IPClaim{ObjectMeta: metav1.ObjectMeta{Namespace: moveNS, Name: fmt.Sprintf("sa-%d", i)}}
		c.Spec.Pool.Name = standalone.Name
		mustCreate(t, src.k8s, c)
	}
	before := waitBound(t, src.k8s, metal3Claims+standaloneClaims, capiClaims)
	pausePool := func(k8s client.Client, patch string) {
		p := &ipamv1alpha1.IPPool{ObjectMeta: metav1.ObjectMeta{Namespace: moveNS, Name: standalone.Name}}
		if err := k8s.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	pausePool(src.k8s, `{"metadata":{"annotations":{"cluster.x-k8s.io/paused":""}}}`)

	c, err := versionlessClusterctl(ctx, repo(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Move(ctx, clusterctl.MoveOptions{
		FromKubeconfig: clusterctl.Kubeconfig{Path: src.kubeconfig, Context: "source"},
		ToKubeconfig:   clusterctl.Kubeconfig{Path: dst.kubeconfig, Context: "target"},
		Namespace:      moveNS,
		// Before the first address lands in the target, every moved claim is reconciled
		// there: the window in which rackwire would give a claim a new address.
		ExperimentalResourceMutators: []cluster.ResourceMutatorFunc{claimsReconciledBeforeAddresses(t, dst.k8s)},
	}); err != nil {
		t.Fatal(err)
	}

	pausePool(dst.k8s, `{"metadata":{"annotations":{"cluster.x-k8s.io/paused":null}}}`)
	after := waitBound(t, dst.k8s, metal3Claims+standaloneClaims, capiClaims)
	if !maps.Equal(before, after) {
		t.Fatalf("claims' addresses changed in the move:\nbefore %v\nafter  %v", before, after)
	}
	// No address was made anew for a claim, and none stays without one: the IPAddresses
	// are exactly the moved ones.
	want := slices.Sorted(func(yield func(string) bool) {
		for _, a := range before {
			if !yield(a.name) {
				return
			}
		}
	})
	if got := addressNames(t, dst.k8s); !slices.Equal(got, want) {
		t.Fatalf("IPAddresses in the target %v, want exactly %v", got, want)
	}

	// The pool's status is rebuilt from the moved addresses (its status does not move).
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p := &ipamv1alpha1.IPPool{}
		if err := dst.k8s.Get(ctx, client.ObjectKey{Namespace: moveNS, Name: movePool}, p); err != nil {
			return false, err
		}
		return p.Status.Usage != nil && p.Status.Usage.Used == metal3Claims+capiClaims && len(p.Status.Indexes) == metal3Claims+capiClaims, nil
	})
	if err != nil {
		p := &ipamv1alpha1.IPPool{}
		_ = dst.k8s.Get(ctx, client.ObjectKey{Namespace: moveNS, Name: movePool}, p)
		t.Fatalf("target pool status %+v: %v", p.Status, err)
	}

	// The source keeps none of it.
	if got := addressNames(t, src.k8s); len(got) > 0 {
		t.Fatalf("IPAddresses left in the source: %v", got)
	}
	var m3 ipamv1alpha1.IPClaimList
	var ca capiipamv1beta2.IPAddressClaimList
	var pools ipamv1alpha1.IPPoolList
	for _, l := range []client.ObjectList{&m3, &ca, &pools} {
		if err := src.k8s.List(ctx, l, client.InNamespace(moveNS)); err != nil {
			t.Fatal(err)
		}
	}
	if len(m3.Items)+len(ca.Items)+len(pools.Items) > 0 {
		t.Fatalf("left in the source: %d IPClaims, %d IPAddressClaims, %d IPPools", len(m3.Items), len(ca.Items), len(pools.Items))
	}
}

// claimsReconciledBeforeAddresses is a mutator of clusterctl move that, when the first
// IPAddress is about to be created in the target (its claims and pool are there already,
// clusterctl creates owners first), touches every claim in the target and waits until the
// claim controllers have reconciled at least as many times as there are claims. It changes
// no object it is given: it only makes sure that rackwire in the target sees each claim,
// without status and without its address, before the address arrives, however fast the
// mover runs.
func claimsReconciledBeforeAddresses(t *testing.T, k8s client.Client) cluster.ResourceMutatorFunc {
	var once sync.Once
	return func(u *unstructured.Unstructured) error {
		if u.GetKind() != "IPAddress" {
			return nil
		}
		var err error
		once.Do(func() { err = touchClaimsAndWait(k8s) })
		return err
	}
}

func touchClaimsAndWait(k8s client.Client) error {
	ctx := context.Background()
	var m3 ipamv1alpha1.IPClaimList
	var ca capiipamv1beta2.IPAddressClaimList
	for _, l := range []client.ObjectList{&m3, &ca} {
		if err := k8s.List(ctx, l, client.InNamespace(moveNS)); err != nil {
			return err
		}
	}
	before := reconciles()
	touch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"test.rackwire.io/touched":"true"}}}`))
	for i := range m3.Items {
		if err := k8s.Patch(ctx, &m3.Items[i], touch); err != nil {
			return err
		}
	}
	for i := range ca.Items {
		if err := k8s.Patch(ctx, &ca.Items[i], touch); err != nil {
			return err
		}
	}
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		now := reconciles()
		return now["ipclaim"]-before["ipclaim"] >= float64(len(m3.Items)) &&
			now["ipaddressclaim"]-before["ipaddressclaim"] >= float64(len(ca.Items)), nil
	})
}

// reconciles reads controller-runtime's reconcile counters by controller. Both managers of
// the test count into them; the source's claims do not change while clusterctl creates
// objects in the target.
func reconciles() map[string]float64 {
	out := map[string]float64{}
	families, _ := ctrlmetrics.Registry.Gather()
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// versionlessClusterctl is clusterctl's client, except that it does not refuse envtest's
// kube-apiserver, which reports version v0.0.0 (its binaries are built without a version).
func versionlessClusterctl(ctx context.Context, cfgPath string) (clusterctl.Client, error) {
	cfg, err := ctlconfig.New(ctx, cfgPath)
	if err != nil {
		return nil, err
	}
	factory := func(in clusterctl.ClusterClientFactoryInput) (cluster.Client, error) {
		kc := cluster.Kubeconfig(in.Kubeconfig)
		return cluster.New(kc, cfg, cluster.InjectYamlProcessor(in.Processor), cluster.InjectProxy(versionless{cluster.NewProxy(kc)})), nil
	}
	return clusterctl.New(ctx, cfgPath, clusterctl.InjectConfig(cfg), clusterctl.InjectClusterClientFactory(factory))
}

type versionless struct{ cluster.Proxy }

func (versionless) ValidateKubernetesVersion() error { return nil }

func mustCreate(t *testing.T, k8s client.Client, o client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), o); err != nil {
		t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
	}
}

// waitBound waits until every claim shows its address, and returns claim -> address.
func waitBound(t *testing.T, k8s client.Client, metal3Claims, capiClaims int) map[string]claimAddr {
	t.Helper()
	ctx := context.Background()
	var out map[string]claimAddr
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out = map[string]claimAddr{}
		var m3 ipamv1alpha1.IPClaimList
		if err := k8s.List(ctx, &m3, client.InNamespace(moveNS)); err != nil {
			return false, err
		}
		for _, c := range m3.Items {
			if c.Status.Address == nil {
				continue
			}
			ip := &ipamv1alpha1.IPAddress{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: moveNS, Name: c.Status.Address.Name}, ip); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			out["IPClaim/"+c.Name] = claimAddr{ip.Name, string(ip.Spec.Address)}
		}
		var ca capiipamv1beta2.IPAddressClaimList
		if err := k8s.List(ctx, &ca, client.InNamespace(moveNS)); err != nil {
			return false, err
		}
		for _, c := range ca.Items {
			if c.Status.AddressRef.Name == "" {
				continue
			}
			ip := &capiipamv1beta2.IPAddress{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: moveNS, Name: c.Status.AddressRef.Name}, ip); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			out["IPAddressClaim/"+c.Name] = claimAddr{ip.Name, ip.Spec.Address}
		}
		return len(out) == metal3Claims+capiClaims, nil
	})
	if err != nil {
		t.Fatalf("claims bound: %v (%d of %d)", out, len(out), metal3Claims+capiClaims)
	}
	return out
}

// addressNames lists the IPAddresses of both kinds in the namespace.
func addressNames(t *testing.T, k8s client.Client) []string {
	t.Helper()
	var m3 ipamv1alpha1.IPAddressList
	var ca capiipamv1beta2.IPAddressList
	for _, l := range []client.ObjectList{&m3, &ca} {
		if err := k8s.List(context.Background(), l, client.InNamespace(moveNS)); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for _, a := range m3.Items {
		out = append(out, a.Name)
	}
	for _, a := range ca.Items {
		out = append(out, a.Name)
	}
	slices.Sort(out)
	return out
}
