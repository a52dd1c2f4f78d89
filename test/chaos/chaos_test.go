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

package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

const ns = "default"

// TestChaos: two replicas, a burst of claims, the leader and the apiserver killed during
// it; see the package documentation.
func TestChaos(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run through make test")
	}
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	// client-go reports every request the apiserver kills cut short; the test says what matters.
	klog.SetLogger(logr.Discard())
	claims := envInt("CHAOS_CLAIMS", 2000)
	leaderKills := envInt("CHAOS_LEADER_KILLS", 10)
	apiserverKills := envInt("CHAOS_APISERVER_KILLS", 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	if keep := os.Getenv("CHAOS_KEEP"); keep != "" {
		dir = keep
	}

	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}

	env, err := controlplane.New(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	var api *apiserver
	defer func() {
		if api != nil {
			api.stop()
		}
		_ = env.Stop()
	}()
	if err := controlplane.InstallPolicies(ctx, cfg, root); err != nil {
		t.Fatal(err)
	}
	if api, err = findAPIServer(dir); err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}

	admin, err := env.AddUser(envtest.User{Name: "chaos-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "manager.kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}

	hooks := env.WebhookInstallOptions
	var replicas []*replica
	for i := range 2 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		probe, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, &replica{
			name: fmt.Sprintf("replica-%d", i), bin: bin, dir: dir, webhookPort: port,
			args: []string{
				"--kubeconfig=" + kubeconfig,
				"--metrics-bind-address=0",
				"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probe),
				"--webhook-host=127.0.0.1",
				"--webhook-port=" + strconv.Itoa(port),
				"--webhook-cert-dir=" + hooks.LocalServingCertDir,
				"--leader-elect", "--leader-election-namespace=" + ns,
				// Short leases, so that ten failovers fit in a burst of two minutes, with
				// two seconds between a leader's deadline to renew and another's takeover
				// (the shipped 15s and 10s leave five), since make test loads the machine.
				"--leader-elect-lease-duration=5s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s",
			},
		})
	}
	stopProxy, err := webhookProxy(ctx, net.JoinHostPort(hooks.LocalServingHost, strconv.Itoa(hooks.LocalServingPort)), replicas)
	if err != nil {
		t.Fatal(err)
	}
	defer stopProxy()
	for _, r := range replicas {
		if err := r.start(); err != nil {
			t.Fatal(err)
		}
		defer r.stop()
	}
	defer func() {
		if t.Failed() {
			t.Logf("manager logs and the apiserver log are in %s (set CHAOS_KEEP=<dir> to keep them)", dir)
		}
	}()

	// Pools: one random, one sequential, each big enough for its half of the claims.
	for _, p := range []struct {
		name     string
		subnet   string
		strategy ipamv1alpha1.AllocationStrategy
	}{{"random", "10.40.0.0/20", ipamv1alpha1.AllocationRandom}, {"seq", "10.50.0.0/20", ipamv1alpha1.AllocationSequential}} {
		pool := &ipamv1alpha1.IPPool{}
		pool.Namespace, pool.Name = ns, p.name
		pool.Spec = ipamv1alpha1.IPPoolSpec{NamePrefix: p.name, AllocationStrategy: p.strategy,
			Pools: []ipamv1alpha1.Pool{{Subnet: ptr.To(ipamv1alpha1.IPSubnetStr(p.subnet)), Prefix: 20}}}
		if err := retry(ctx, func() error { return c.Create(ctx, pool) }); err != nil {
			t.Fatal(err)
		}
	}

	published := newPublications()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go published.poll(watchCtx, c)

	start := time.Now()
	var created atomic.Int64
	burstDone := make(chan error, 1)
	// Spread the creates over the time the faults take (a failover costs a lease and a
	// start, some nine seconds here), so that every fault lands during the burst.
	events := leaderKills + apiserverKills
	spread := max(time.Minute, time.Duration(events)*9*time.Second)
	go func() { burstDone <- createClaims(ctx, c, claims, spread, &created) }()

	// The faults, spread over the burst: a leader kill every few seconds, the apiserver
	// killed and restarted between them.
	var kills, restarts int
	apiserverAt := map[int]bool{}
	for k := range apiserverKills {
		apiserverAt[(k+1)*events/(apiserverKills+1)] = true
	}
	for e := range events {
		// Wait for the burst to progress, so that the faults land during it.
		for created.Load() < int64((e+1)*claims/(events+2)) && len(burstDone) == 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if apiserverAt[e] {
			if err := api.kill(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if err := api.restart(); err != nil {
				t.Fatal(err)
			}
			restarts++
			t.Logf("%6.1fs: kube-apiserver killed and restarted (%d), %d claims created", time.Since(start).Seconds(), restarts, created.Load())
			if err := waitAPIServer(ctx, c); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if kills >= leaderKills {
			continue
		}
		leader, err := waitLeader(ctx, replicas)
		if err != nil {
			t.Fatal(err)
		}
		leader.kill()
		kills++
		t.Logf("%6.1fs: leader %s killed (%d), %d claims created", time.Since(start).Seconds(), leader.name, kills, created.Load())
		time.Sleep(2 * time.Second)
	}
	for kills < leaderKills {
		leader, err := waitLeader(ctx, replicas)
		if err != nil {
			t.Fatal(err)
		}
		leader.kill()
		kills++
		t.Logf("%6.1fs: leader %s killed (%d) after the creates", time.Since(start).Seconds(), leader.name, kills)
		time.Sleep(2 * time.Second)
	}
	if err := <-burstDone; err != nil {
		t.Fatal(err)
	}
	createdIn := time.Since(start)

	// Every claim bound.
	var bound int
	err = wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(context.Context) (bool, error) {
		bound = published.ready()
		return bound == claims, nil
	})
	if err != nil {
		t.Fatalf("%d of %d claims bound after 10 minutes", bound, claims)
	}
	boundIn := time.Since(start)
	stopWatch()
	if changed := published.changes(); len(changed) > 0 {
		t.Fatalf("published addresses changed: %v", changed)
	}
	if err := checkOneEach(ctx, c); err != nil {
		t.Fatal(err)
	}
	// A fault that never cut a create short tested nothing of the settling of creates. A create
	// is cut short either under its sender (the answer lost: interrupted) or with it (a killed
	// leader's create that its successor found landed): either way its doubt had to be settled.
	interrupted, landed, err := interruptedCreates(dir)
	if err != nil {
		t.Fatal(err)
	}
	if interrupted+landed == 0 {
		t.Fatalf("no fault cut an IPAddress create short: the faults missed the burst")
	}
	t.Logf("%d IPAddress creates interrupted by the faults; %d creates found landed by a retry or a new leader", interrupted, landed)

	// Second phase, under faults: names reused, a pool edited, a pool exhausted and back.
	churnDone := make(chan struct{})
	churnErr := make(chan error, 1)
	var small string
	var smallSize int
	go func() {
		defer close(churnDone)
		var err error
		small, smallSize, err = churn(ctx, c, envInt("CHAOS_REUSED", 200))
		churnErr <- err
	}()
	churnFaults, churnStart := 0, time.Now()
	for _, f := range []string{"leader", "apiserver", "leader"} {
		select {
		case <-churnDone:
		case <-time.After(2 * time.Second):
		}
		select {
		case <-churnDone:
			t.Fatalf("the churn ended after %s, before fault %d (%s) could land during it", time.Since(churnStart).Round(time.Second), churnFaults+1, f)
		default:
		}
		if f == "apiserver" {
			if err := api.kill(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if err := api.restart(); err != nil {
				t.Fatal(err)
			}
			if err := waitAPIServer(ctx, c); err != nil {
				t.Fatal(err)
			}
		} else {
			leader, err := waitLeader(ctx, replicas)
			if err != nil {
				t.Fatal(err)
			}
			leader.kill()
		}
		churnFaults++
		t.Logf("%6.1fs: churn fault %d (%s)", time.Since(start).Seconds(), churnFaults, f)
	}
	<-churnDone
	if err := <-churnErr; err != nil {
		t.Fatal(err)
	}
	t.Logf("%6.1fs: churn done in %s", time.Since(start).Seconds(), time.Since(churnStart).Round(time.Second))
	if err := noneLost(ctx, c, small, smallSize); err != nil {
		t.Fatal(err)
	}
	if err := checkOneEach(ctx, c); err != nil {
		t.Fatalf("after the churn: %v", err)
	}

	// Everything released.
	if err := retry(ctx, func() error { return c.DeleteAllOf(ctx, &ipamv1alpha1.IPClaim{}, client.InNamespace(ns)) }); err != nil {
		t.Fatal(err)
	}
	if err := retry(ctx, func() error {
		return c.DeleteAllOf(ctx, &capiipamv1beta2.IPAddressClaim{}, client.InNamespace(ns))
	}); err != nil {
		t.Fatal(err)
	}
	var left string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(context.Context) (bool, error) {
		left, err = leftovers(ctx, c)
		return left == "", err
	})
	if err != nil {
		t.Fatalf("after deleting every claim: %s (%v)", left, err)
	}
	msg := fmt.Sprintf("chaos: %d claims (Metal3 and Cluster API, a random and a sequential pool), 2 replicas; "+
		"%d leader SIGKILLs, %d kube-apiserver kills and restarts; created in %s, all bound in %s, "+
		"each with one IPAddress, no address twice, no published address changed; %d creates interrupted; "+
		"churn under %d faults (names reused, a pool edited, a pool exhausted and back) lost no address; all released in %s",
		claims, kills, restarts, createdIn.Round(time.Second), boundIn.Round(time.Second), interrupted, churnFaults, (time.Since(start) - boundIn).Round(time.Second))
	t.Log(msg)
	fmt.Println(msg)
}

// retry runs fn until it succeeds or fails with a definite refusal, riding out a restarting
// apiserver and webhook server.
func retry(ctx context.Context, fn func() error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		last = fn()
		if last == nil || apierrors.IsAlreadyExists(last) {
			return true, nil
		}
		if apierrors.IsInvalid(last) || apierrors.IsBadRequest(last) {
			return false, last
		}
		return false, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return err
}

func waitAPIServer(ctx context.Context, c client.Client) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return c.List(ctx, &corev1.NamespaceList{}, client.Limit(1)) == nil, nil
	})
}

func waitLeader(ctx context.Context, replicas []*replica) (*replica, error) {
	var leader *replica
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		for _, r := range replicas {
			if r.leads() {
				leader = r
				return true, nil
			}
		}
		return false, nil
	})
	return leader, err
}

// createClaims creates n claims, half Metal3 and half Cluster API over both pools, at a
// pace that spreads them over spread, so that the faults land among them.
func createClaims(ctx context.Context, c client.Client, n int, spread time.Duration, created *atomic.Int64) error {
	tick := time.NewTicker(spread / time.Duration(max(n, 1)))
	defer tick.Stop()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		<-tick.C
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			pool := []string{"random", "seq"}[(i/2)%2]
			var obj client.Object
			if i%2 == 0 {
				m := &ipamv1alpha1.IPClaim{}
				m.Namespace, m.Name = ns, fmt.Sprintf("m3-%d", i)
				m.Spec.Pool = corev1.ObjectReference{Name: pool}
				obj = m
			} else {
				k := &capiipamv1beta2.IPAddressClaim{}
				k.Namespace, k.Name = ns, fmt.Sprintf("capi-%d", i)
				k.Spec.PoolRef = capiipamv1beta2.IPPoolReference{APIGroup: ipamv1alpha1.GroupVersion.Group, Kind: "IPPool", Name: pool}
				obj = k
			}
			if err := retry(ctx, func() error { return c.Create(ctx, obj.DeepCopyObject().(client.Object)) }); err != nil {
				errs <- fmt.Errorf("creating %s: %w", obj.GetName(), err)
				return
			}
			created.Add(1)
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// publications records the first address each claim's status published, and any later
// different one.
type publications struct {
	mu      sync.Mutex
	first   map[string]string
	changed []string
	nReady  int
}

func newPublications() *publications { return &publications{first: map[string]string{}} }

func (p *publications) see(claim, address string) {
	if address == "" {
		return
	}
	if was, ok := p.first[claim]; !ok {
		p.first[claim] = address
	} else if was != address {
		p.changed = append(p.changed, fmt.Sprintf("%s: %s then %s", claim, was, address))
	}
}

// poll lists the claims every few hundred milliseconds (a watch would break with every
// apiserver kill) until ctx ends.
func (p *publications) poll(ctx context.Context, c client.Client) {
	for ctx.Err() == nil {
		var m3 ipamv1alpha1.IPClaimList
		var capi capiipamv1beta2.IPAddressClaimList
		if c.List(ctx, &m3, client.InNamespace(ns)) == nil && c.List(ctx, &capi, client.InNamespace(ns)) == nil {
			ready := 0
			p.mu.Lock()
			for _, cl := range m3.Items {
				if cl.Status.Address != nil {
					p.see("IPClaim/"+cl.Name, cl.Status.Address.Name)
				}
				if meta.IsStatusConditionTrue(cl.Status.Conditions, ipamv1alpha1.ConditionReady) && cl.Status.Address != nil {
					ready++
				}
			}
			for _, cl := range capi.Items {
				p.see("IPAddressClaim/"+cl.Name, cl.Status.AddressRef.Name)
				if meta.IsStatusConditionTrue(cl.Status.Conditions, capiipamv1beta2.IPAddressClaimReadyCondition) && cl.Status.AddressRef.Name != "" {
					ready++
				}
			}
			p.nReady = ready
			p.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func (p *publications) ready() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nReady
}

func (p *publications) changes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// checkOneEach checks that each claim holds exactly one IPAddress, the one its status
// publishes, that a claim not yet bound holds none, that every IPAddress holds for a claim
// that exists, and that no address of a pool is held twice, whatever the kinds.
func checkOneEach(ctx context.Context, c client.Client) error {
	var m3 ipamv1alpha1.IPAddressList
	var capi capiipamv1beta2.IPAddressList
	var m3c ipamv1alpha1.IPClaimList
	var capic capiipamv1beta2.IPAddressClaimList
	for _, l := range []client.ObjectList{&m3, &capi, &m3c, &capic} {
		if err := retry(ctx, func() error { return c.List(ctx, l, client.InNamespace(ns)) }); err != nil {
			return err
		}
	}
	published := map[string]string{}
	for _, cl := range m3c.Items {
		published["IPClaim/"+cl.Name] = ""
		if cl.Status.Address != nil {
			published["IPClaim/"+cl.Name] = cl.Status.Address.Name
		}
	}
	for _, cl := range capic.Items {
		published["IPAddressClaim/"+cl.Name] = cl.Status.AddressRef.Name
	}
	holder := map[string]string{}
	perClaim := map[string][]string{}
	take := func(pool, address, claim, name string) error {
		k := pool + "/" + address
		if other, ok := holder[k]; ok {
			return fmt.Errorf("address %s held by %s and %s", k, other, claim)
		}
		holder[k] = claim
		perClaim[claim] = append(perClaim[claim], name)
		return nil
	}
	for _, ip := range m3.Items {
		if err := take(ip.Spec.Pool.Name, string(ip.Spec.Address), "IPClaim/"+ip.Spec.Claim.Name, ip.Name); err != nil {
			return err
		}
	}
	for _, ip := range capi.Items {
		if err := take(ip.Spec.PoolRef.Name, ip.Spec.Address, "IPAddressClaim/"+ip.Spec.ClaimRef.Name, ip.Name); err != nil {
			return err
		}
	}
	for claim, names := range perClaim {
		pub, ok := published[claim]
		switch {
		case !ok:
			return fmt.Errorf("%v held for %s, which does not exist", names, claim)
		case len(names) != 1:
			return fmt.Errorf("%s holds %d IPAddresses: %v", claim, len(names), names)
		case pub != names[0]:
			return fmt.Errorf("%s publishes %q but holds %s", claim, pub, names[0])
		}
	}
	for claim, pub := range published {
		if pub != "" && len(perClaim[claim]) == 0 {
			return fmt.Errorf("%s publishes %s, which does not hold for it", claim, pub)
		}
	}
	return nil
}

// leftovers says what is left once every claim is deleted: claims, IPAddresses, or a pool
// that still counts an address.
func leftovers(ctx context.Context, c client.Client) (string, error) {
	var m3c ipamv1alpha1.IPClaimList
	var capic capiipamv1beta2.IPAddressClaimList
	var m3 ipamv1alpha1.IPAddressList
	var capi capiipamv1beta2.IPAddressList
	for _, l := range []client.ObjectList{&m3c, &capic, &m3, &capi} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return "listing failed", nil
		}
	}
	if n := len(m3c.Items) + len(capic.Items) + len(m3.Items) + len(capi.Items); n > 0 {
		return fmt.Sprintf("%d IPClaims, %d IPAddressClaims, %d Metal3 and %d Cluster API IPAddresses left",
			len(m3c.Items), len(capic.Items), len(m3.Items), len(capi.Items)), nil
	}
	for _, name := range []string{"random", "seq", "small"} {
		p := &ipamv1alpha1.IPPool{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return "reading pools failed", nil
		}
		if p.Status.Usage == nil || p.Status.Usage.Used != 0 {
			return fmt.Sprintf("pool %s: usage %+v", name, p.Status.Usage), nil
		}
	}
	return "", nil
}
