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

package bench

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/controlplane"
)

const (
	kindMetal3 = "metal3"
	kindCAPI   = "capi"

	createWorkers = 32
	limitWorkers  = 16
)

// workload is one row of the table.
type workload struct {
	kind    string // kindMetal3 or kindCAPI
	family  string // "v4" (a /16) or "v6" (a /64)
	n       int
	prefill int // IPAddresses the pool holds before the burst
	label   string
	// nameLen pads claim names to this length (CAPM3's names run to about 60 characters);
	// 0 keeps them short.
	nameLen int
}

// claimName is the name of the i-th claim of the workload.
func (w workload) claimName(i int) string {
	if w.nameLen == 0 {
		return fmt.Sprintf("claim-%d", i)
	}
	prefix := "cluster-a-workers-md-0-abcde-fghij-provisioning-claim-"
	return prefix + fmt.Sprintf("%0*d", max(1, w.nameLen-len(prefix)), i)
}

func (w workload) name() string {
	if w.label != "" {
		return w.label
	}
	return w.kind + " " + map[string]string{"v4": "IPv4 /16", "v6": "IPv6 /64"}[w.family]
}

type result struct {
	name           string
	n              int
	seconds        float64
	rate           float64
	tailRatio      float64
	p50, p99       time.Duration
	peakMiB        float64
	writesPerClaim float64
	readsPerClaim  float64
	conflicts      float64
	cpu            cpu
	err            error
}

// BenchmarkIPAMThroughput runs the whole table once (use -benchtime=1x).
func BenchmarkIPAMThroughput(b *testing.B) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Skip("KUBEBUILDER_ASSETS is not set: run `make bench`")
	}
	logf.SetLogger(logr.Discard()) // envtest logs through controller-runtime; the table is the output
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rackwire-bench-")
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("BENCH_KEEP") == "" {
		defer func() { _ = os.RemoveAll(dir) }()
	}
	e, err := startEnv(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer e.stop()
	fmt.Printf("manager: built binary, default flags %q; log %s; pprof http://%s/debug/pprof/\n",
		os.Getenv("BENCH_MANAGER_FLAGS"), e.mgrLog, e.PprofAddr)

	ns := sizes()
	prefill := 20000
	if v, err := strconv.Atoi(os.Getenv("BENCH_PREFILL")); err == nil {
		prefill = v
	}
	b.ResetTimer()
	for range b.N {
		limitN := slices.Max(ns)
		limit, err := measureLimit(ctx, e, limitN)
		if err != nil {
			b.Fatal(err)
		}
		floor, err := measureCreateFloor(ctx, e, limitN)
		if err != nil {
			b.Fatal(err)
		}
		var rows []result
		for _, n := range ns {
			for _, w := range []workload{{kind: kindMetal3, family: "v4", n: n}, {kind: kindCAPI, family: "v4", n: n}, {kind: kindCAPI, family: "v6", n: n}} {
				if selected(w.name()) {
					rows = append(rows, runWorkload(ctx, e, w))
				}
			}
		}
		if selected("long names") {
			// A pool whose status.indexes passes its byte budget: the map is dropped, and
			// the counts and conditions must stay current to the last claim.
			longN := 25000
			if v, err := strconv.Atoi(os.Getenv("BENCH_LONG_N")); err == nil && v > 0 {
				longN = v
			}
			rows = append(rows, runWorkload(ctx, e, workload{kind: kindMetal3, family: "v4", n: longN, nameLen: 60,
				label: "long names: metal3 IPv4 /16, 60-char claim names"}))
		}
		// The filling pair runs at the largest N, where the goal for a filled pool is set:
		// 1,000 claims took 4-5 s, which one apiserver GC cycle more or less swung by a fifth.
		fillN, fill := limitN, 0.0
		if selected("fill") {
			empty := runWorkload(ctx, e, workload{kind: kindCAPI, family: "v4", n: fillN, label: "fill: empty pool"})
			full := runWorkload(ctx, e, workload{kind: kindCAPI, family: "v4", n: fillN, prefill: prefill,
				label: fmt.Sprintf("fill: %d in pool", prefill)})
			rows = append(rows, empty, full)
			if empty.err == nil && full.err == nil {
				fill = full.rate / empty.rate
			}
		}
		var peer *result
		if os.Getenv("BENCH_PEER") != "0" && selected("metal3 IPv4 /16") {
			// rackwire's control plane stops first: the peer runs on a machine as idle as
			// rackwire had it.
			e.stop()
			r, bin := runPeer(ctx, e.root, dir, limitN)
			fmt.Printf("ip-address-manager: %s, flags %q; log %s\n", bin, strings.Join(peerFlags, " "), filepath.Join(dir, "ipam-manager.log"))
			rows = append(rows, r)
			peer = &r
		}
		printTable(limit, floor, rows, fill, peer)
		for _, r := range rows {
			if r.err != nil {
				b.Errorf("%s N=%d: %v", r.name, r.n, r.err)
			}
		}
	}
}

// selected reports whether BENCH_WORKLOADS (comma-separated substrings of workload names,
// for profiling one workload) lets the workload named name run; unset runs them all.
func selected(name string) bool {
	filter := os.Getenv("BENCH_WORKLOADS")
	if filter == "" {
		return true
	}
	for f := range strings.SplitSeq(filter, ",") {
		if f = strings.TrimSpace(f); f != "" && strings.Contains(name, f) {
			return true
		}
	}
	return false
}

func sizes() []int {
	var ns []int
	for f := range strings.SplitSeq(os.Getenv("BENCH_N"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			ns = append(ns, n)
		}
	}
	if len(ns) == 0 {
		ns = []int{1000, 5000}
	}
	if os.Getenv("BENCH_LARGE") == "1" && !slices.Contains(ns, 20000) {
		ns = append(ns, 20000)
	}
	return ns
}

type limitResult struct {
	n             int
	seconds       float64
	writesPerSec  float64
	claimsPerSec  float64
	apiserverRate float64
	cpu           cpu
}

// measureLimit does, with a plain client and no reconciler involved, the writes a
// contract-following allocator must make per claim: finalizer, IPAddress, status. The
// claims point at a pool kind rackwire does not serve, so the manager ignores them but its
// webhooks stay in the apiserver's write path, as they are for the rackwire runs.
func measureLimit(ctx context.Context, e *env, n int) (limitResult, error) {
	ns, err := newNamespace(ctx, e, "bench-limit-")
	if err != nil {
		return limitResult{}, err
	}
	claims := make([]*capiipamv1beta2.IPAddressClaim, n)
	err = parallel(n, createWorkers, func(i int) error {
		c := &capiipamv1beta2.IPAddressClaim{}
		c.Namespace, c.Name = ns, fmt.Sprintf("limit-%d", i)
		c.Spec.PoolRef = capiipamv1beta2.IPPoolReference{APIGroup: "bench.rackwire.io", Kind: "LimitPool", Name: "limit"}
		claims[i] = c
		return e.c.Create(ctx, c)
	})
	if err != nil {
		return limitResult{}, fmt.Errorf("pre-creating claims: %w", err)
	}
	base := netip.MustParseAddr("10.0.0.2")
	addrs := make([]netip.Addr, n)
	for i := range addrs {
		addrs[i] = base
		base = base.Next()
	}
	if d := os.Getenv("BENCH_PROFILE_DIR"); d != "" {
		go e.apiserverProfile(ctx, filepath.Join(d, fmt.Sprintf("apiserver-limit-%d.pprof", n)), 15)
	}
	before, cpuBefore := e.requests(ctx), e.cpuNow()
	start := time.Now()
	err = parallel(n, limitWorkers, func(i int) error {
		c := claims[i]
		old := c.DeepCopy()
		controllerutil.AddFinalizer(c, "ipam.metal3.io/ipclaim")
		if err := e.c.Patch(ctx, c, client.MergeFrom(old)); err != nil {
			return err
		}
		ip := &capiipamv1beta2.IPAddress{}
		ip.Namespace, ip.Name = ns, c.Name
		ip.Finalizers = []string{"ipam.metal3.io/ipaddress"}
		ip.Spec = capiipamv1beta2.IPAddressSpec{
			ClaimRef: capiipamv1beta2.IPAddressClaimReference{Name: c.Name},
			PoolRef:  c.Spec.PoolRef,
			Address:  addrs[i].String(), Prefix: ptr.To[int32](16), Gateway: "10.0.0.1",
		}
		if err := controllerutil.SetControllerReference(c, ip, e.c.Scheme()); err != nil {
			return err
		}
		if err := e.c.Create(ctx, ip); err != nil {
			return err
		}
		old = c.DeepCopy()
		c.Status.AddressRef = capiipamv1beta2.IPAddressReference{Name: ip.Name}
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{
			Type: capiipamv1beta2.IPAddressClaimReadyCondition, Status: metav1.ConditionTrue,
			Reason: "Allocated", Message: "address " + ip.Spec.Address + " allocated", ObservedGeneration: c.Generation,
		})
		return e.c.Status().Patch(ctx, c, client.MergeFrom(old))
	})
	took := time.Since(start).Seconds()
	used := e.cpuNow().since(cpuBefore)
	if err != nil {
		return limitResult{}, fmt.Errorf("the limit run: %w", err)
	}
	writes := e.requests(ctx).Since(before).Writes()
	return limitResult{
		n: n, seconds: took, writesPerSec: float64(3*n) / took, claimsPerSec: float64(n) / took,
		apiserverRate: writes / took, cpu: used,
	}, nil
}

// runWorkload creates w.n claims as fast as the client allows and waits until every one is
// bound; then checks the outcome.
func runWorkload(ctx context.Context, e *env, w workload) result {
	r := result{name: w.name(), n: w.n}
	r.err = func() error {
		ns, err := newNamespace(ctx, e, "bench-")
		if err != nil {
			return err
		}
		pool := newPool(ns, w.family)
		if err := e.c.Create(ctx, pool); err != nil {
			return err
		}
		if err := waitFor(ctx, 2*time.Minute, func() (bool, error) {
			p := &ipamv1alpha1.IPPool{}
			if err := e.c.Get(ctx, client.ObjectKeyFromObject(pool), p); err != nil {
				return false, err
			}
			return e.peer || meta.IsStatusConditionTrue(p.Status.Conditions, ipamv1alpha1.ConditionReady), nil
		}); err != nil {
			return fmt.Errorf("pool never Ready: %w", err)
		}
		if w.prefill > 0 {
			if err := prefillPool(ctx, e, pool, w.prefill); err != nil {
				return err
			}
		}

		bound := newBoundTracker(w.n)
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		watchErr := make(chan error, 1)
		go func() { watchErr <- watchClaims(wctx, e, w.kind, ns, bound) }()
		if err := bound.waitStarted(ctx); err != nil {
			return err
		}

		e.resetPeak()
		before, cpuBefore := e.requests(ctx), e.cpuNow()
		created := make([]time.Time, w.n)
		start := time.Now()
		if d := os.Getenv("BENCH_PROFILE_DIR"); d != "" {
			base := strings.NewReplacer(" ", "-", "/", "", ":", "").Replace(w.name())
			go e.cpuProfile(ctx, filepath.Join(d, fmt.Sprintf("manager-%s-%d.pprof", base, w.n)), 15)
			go e.apiserverProfile(ctx, filepath.Join(d, fmt.Sprintf("apiserver-%s-%d.pprof", base, w.n)), 15)
		}
		if err := parallel(w.n, createWorkers, func(i int) error {
			created[i] = time.Now()
			var obj client.Object
			if w.kind == kindMetal3 {
				c := &ipamv1alpha1.IPClaim{}
				c.Namespace, c.Name = ns, w.claimName(i)
				c.Spec.Pool = corev1.ObjectReference{Name: pool.Name}
				obj = c
			} else {
				c := &capiipamv1beta2.IPAddressClaim{}
				c.Namespace, c.Name = ns, w.claimName(i)
				c.Spec.PoolRef = capiipamv1beta2.IPPoolReference{APIGroup: ipamv1alpha1.GroupVersion.Group, Kind: "IPPool", Name: pool.Name}
				obj = c
			}
			return e.c.Create(ctx, obj)
		}); err != nil {
			return fmt.Errorf("creating claims: %w", err)
		}
		limit := time.Duration(max(300, w.n/5)) * time.Second
		select {
		case <-bound.all:
		case err := <-watchErr:
			return fmt.Errorf("watching claims: %w", err)
		case <-time.After(limit):
			return fmt.Errorf("only %d of %d claims bound after %s", bound.count(), w.n, limit)
		}
		r.peakMiB = e.peakMiB()
		r.cpu = e.cpuNow().since(cpuBefore)
		delta := e.requests(ctx).Since(before)
		cancel()

		times := bound.times()
		last := slices.MaxFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		r.seconds = last.Sub(start).Seconds()
		r.rate = float64(w.n) / r.seconds
		r.tailRatio = tailRatio(times)
		lat := make([]time.Duration, w.n)
		for i := range lat {
			lat[i] = times[i].Sub(created[i])
		}
		slices.Sort(lat)
		r.p50, r.p99 = lat[w.n/2], lat[min(w.n-1, w.n*99/100)]
		// The harness's own claim creates are not the manager's requests.
		r.writesPerClaim = (delta.Writes() - float64(w.n)) / float64(w.n)
		reads := 0.0
		conflicts := 0.0
		for k, v := range delta {
			if strings.HasPrefix(k, "GET ") || strings.HasPrefix(k, "LIST ") {
				reads += v
			}
			if strings.HasSuffix(k, "(409)") {
				conflicts += v
			}
		}
		r.readsPerClaim = reads / float64(w.n)
		r.conflicts = conflicts
		if os.Getenv("BENCH_VERBOSE") != "" {
			printRequests(w.name(), w.n, delta)
		}
		return verify(ctx, e, w, ns, pool.Name)
	}()
	return r
}

func claimIndex(name string) int {
	i, err := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
	if err != nil {
		return -1
	}
	return i
}

// tailRatio is the binding rate of the last 10% of claims over that of the first 10%, each
// measured over the span of its own bindings: counting the first 10% from the start of the
// burst would charge them the time to create the claims and fill the pipeline, and flatter
// the ratio.
func tailRatio(times []time.Time) float64 {
	s := slices.Clone(times)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	k := max(2, len(s)/10)
	span := func(from, to time.Time) float64 { return max(to.Sub(from).Seconds(), 1e-3) }
	first := float64(k-1) / span(s[0], s[k-1])
	last := float64(k-1) / span(s[len(s)-k], s[len(s)-1])
	return last / first
}

func newPool(ns, family string) *ipamv1alpha1.IPPool {
	p := &ipamv1alpha1.IPPool{}
	p.Namespace, p.Name = ns, "pool"
	p.Spec.NamePrefix = "pool"
	entry := ipamv1alpha1.Pool{
		Subnet: ptr.To(ipamv1alpha1.IPSubnetStr("10.0.0.0/16")), Gateway: ptr.To(ipamv1alpha1.IPAddressStr("10.0.0.1")), Prefix: 16,
	}
	if family == "v6" {
		entry = ipamv1alpha1.Pool{
			Subnet: ptr.To(ipamv1alpha1.IPSubnetStr("fd00:1::/64")), Gateway: ptr.To(ipamv1alpha1.IPAddressStr("fd00:1::1")), Prefix: 64,
		}
	}
	p.Spec.Pools = []ipamv1alpha1.Pool{entry}
	return p
}

// prefillPool creates count CAPI IPAddresses in the pool, as earlier claims would have left
// them, and waits until the pool's status counts them.
func prefillPool(ctx context.Context, e *env, pool *ipamv1alpha1.IPPool, count int) error {
	base := netip.MustParseAddr("10.0.128.0")
	addrs := make([]netip.Addr, count)
	for i := range addrs {
		addrs[i] = base
		base = base.Next()
	}
	start := time.Now()
	if err := parallel(count, createWorkers, func(i int) error {
		ip := &capiipamv1beta2.IPAddress{}
		ip.Namespace, ip.Name = pool.Namespace, fmt.Sprintf("prefill-%d", i)
		ip.Spec = capiipamv1beta2.IPAddressSpec{
			ClaimRef: capiipamv1beta2.IPAddressClaimReference{Name: ip.Name},
			PoolRef:  capiipamv1beta2.IPPoolReference{APIGroup: ipamv1alpha1.GroupVersion.Group, Kind: "IPPool", Name: pool.Name},
			Address:  addrs[i].String(), Prefix: ptr.To[int32](16), Gateway: "10.0.0.1",
		}
		return e.c.Create(ctx, ip)
	}); err != nil {
		return fmt.Errorf("pre-filling the pool: %w", err)
	}
	err := waitFor(ctx, 10*time.Minute, func() (bool, error) {
		p := &ipamv1alpha1.IPPool{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(pool), p); err != nil {
			return false, err
		}
		return p.Status.Usage != nil && p.Status.Usage.Used == int64(count), nil
	})
	fmt.Printf("pre-filled the pool with %d addresses in %s (until its status counted them)\n", count, time.Since(start).Round(time.Second))
	return err
}

// boundTracker records when each claim was first seen Ready.
type boundTracker struct {
	mu      sync.Mutex
	at      []time.Time
	n       atomic.Int64
	all     chan struct{}
	started chan struct{}
}

func newBoundTracker(n int) *boundTracker {
	return &boundTracker{at: make([]time.Time, n), all: make(chan struct{}), started: make(chan struct{})}
}

func (t *boundTracker) mark(name string, when time.Time) {
	i := claimIndex(name)
	if i < 0 || i >= len(t.at) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.at[i].IsZero() {
		return
	}
	t.at[i] = when
	if int(t.n.Add(1)) == len(t.at) {
		close(t.all)
	}
}

func (t *boundTracker) count() int { return int(t.n.Load()) }

func (t *boundTracker) times() []time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.at)
}

func (t *boundTracker) waitStarted(ctx context.Context) error {
	select {
	case <-t.started:
		return nil
	case <-time.After(time.Minute):
		return errors.New("the claim watch did not start")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watchClaims marks claims bound as the watch shows them Ready; a watch that ends is
// resumed after a listing (claims found Ready in it count as bound now).
func watchClaims(ctx context.Context, e *env, kind, ns string, t *boundTracker) error {
	once := sync.Once{}
	for ctx.Err() == nil {
		var list client.ObjectList = &capiipamv1beta2.IPAddressClaimList{}
		if kind == kindMetal3 {
			list = &ipamv1alpha1.IPClaimList{}
		}
		if err := e.c.List(ctx, list, client.InNamespace(ns)); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		now := time.Now()
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			if ready(o, e.peer) {
				t.mark(o.(client.Object).GetName(), now)
			}
			return nil
		})
		w, err := e.c.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{
			ResourceVersion: list.GetResourceVersion(), TimeoutSeconds: ptr.To[int64](3600),
		}})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		once.Do(func() { close(t.started) })
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			if ready(ev.Object, e.peer) {
				t.mark(ev.Object.(client.Object).GetName(), time.Now())
			}
		}
		w.Stop()
	}
	return nil
}

// ready reports whether a claim is answered; ip-address-manager's IPClaims (peer) carry
// only the address, no conditions.
func ready(o any, peer bool) bool {
	switch c := o.(type) {
	case *ipamv1alpha1.IPClaim:
		if peer {
			return c.Status.Address != nil
		}
		return meta.IsStatusConditionTrue(c.Status.Conditions, ipamv1alpha1.ConditionReady) && c.Status.Address != nil
	case *capiipamv1beta2.IPAddressClaim:
		return meta.IsStatusConditionTrue(c.Status.Conditions, capiipamv1beta2.IPAddressClaimReadyCondition) && c.Status.AddressRef.Name != ""
	}
	return false
}

// verify checks every claim bound to an address of its own, no address given twice, and
// the pool's counts equal to its IPAddress objects.
func verify(ctx context.Context, e *env, w workload, ns, pool string) error {
	used := map[string]string{}
	perClaim := map[string]int{}
	var addresses int
	take := func(address, claim string) error {
		if other, ok := used[address]; ok {
			return fmt.Errorf("address %s given to %s and %s", address, other, claim)
		}
		used[address] = claim
		perClaim[claim]++
		addresses++
		return nil
	}
	var m3 ipamv1alpha1.IPAddressList
	if err := e.c.List(ctx, &m3, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, ip := range m3.Items {
		if err := take(string(ip.Spec.Address), ip.Spec.Claim.Name); err != nil {
			return err
		}
	}
	var capi capiipamv1beta2.IPAddressList
	if err := e.c.List(ctx, &capi, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, ip := range capi.Items {
		if err := take(ip.Spec.Address, ip.Spec.ClaimRef.Name); err != nil {
			return err
		}
	}
	if addresses != w.n+w.prefill {
		return fmt.Errorf("%d IPAddresses, want %d", addresses, w.n+w.prefill)
	}
	var bound int
	if w.kind == kindMetal3 {
		var l ipamv1alpha1.IPClaimList
		if err := e.c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range l.Items {
			if ready(&l.Items[i], e.peer) && perClaim[l.Items[i].Name] == 1 {
				bound++
			}
		}
	} else {
		var l capiipamv1beta2.IPAddressClaimList
		if err := e.c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range l.Items {
			if ready(&l.Items[i], e.peer) && perClaim[l.Items[i].Name] == 1 && l.Items[i].Status.AddressRef.Name != "" {
				bound++
			}
		}
	}
	if bound != w.n {
		return fmt.Errorf("%d of %d claims bound to exactly one IPAddress", bound, w.n)
	}
	if e.peer {
		return nil
	}
	return waitFor(ctx, 2*time.Minute, func() (bool, error) {
		p := &ipamv1alpha1.IPPool{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pool}, p); err != nil {
			return false, err
		}
		if p.Status.Usage == nil || p.Status.Usage.Used != int64(addresses) {
			return false, nil
		}
		// Past its byte budget the map is not written, and a condition says how to list.
		if meta.IsStatusConditionTrue(p.Status.Conditions, "IndexesOmitted") {
			return p.Status.Indexes == nil, nil
		}
		return len(p.Status.Indexes) == addresses, nil
	})
}

func newNamespace(ctx context.Context, e *env, prefix string) (string, error) {
	ns := &corev1.Namespace{}
	ns.GenerateName = prefix
	if err := e.c.Create(ctx, ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}

// parallel runs fn(0..n-1) on workers goroutines. A request refused for a passing reason
// (the webhook server briefly unavailable, the apiserver throttling or timing out under a
// burst on a shared machine) is retried with a growing delay rather than failing the run.
func parallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := retry(func() error { return fn(i) }); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// retry runs fn until it succeeds (or finds its object already there), at most 8 times with
// a growing delay.
func retry(fn func() error) error {
	var err error
	delay := 100 * time.Millisecond
	for range 8 {
		if err = fn(); err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		time.Sleep(delay)
		delay = min(2*delay, 2*time.Second)
	}
	return err
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("timed out after %s (last error: %v)", timeout, last)
}

func printRequests(name string, n int, r controlplane.Requests) {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return r[keys[i]] > r[keys[j]] })
	fmt.Printf("apiserver requests during %s N=%d (per claim):", name, n)
	for _, k := range keys {
		if r[k] >= float64(n)/100 || strings.Contains(k, "ippools") {
			fmt.Printf(" [%s %.3f]", k, r[k]/float64(n))
		}
	}
	fmt.Println()
}

func printTable(l, fl limitResult, rows []result, fill float64, peer *result) {
	fmt.Printf("\nThe limit: %d claims x 3 writes (finalizer patch, IPAddress create, status patch), %d workers, QPS 1000/burst 2000:\n"+
		"  %.1f s, %.0f writes/s (apiserver counted %.0f writes/s), %.1f claims/s at the limit; "+
		"CPU ms/claim apiserver/etcd/manager/harness %s, other processes %.0f%% of the machine\n\n",
		l.n, limitWorkers, l.seconds, l.writesPerSec, l.apiserverRate, l.claimsPerSec, l.cpu.perClaim(l.n), othersPct(l.cpu))
	fmt.Printf("The floor that counts the user's create: %d claims x 3 writes (the user's create with the finalizer on, "+
		"IPAddress create, status patch), %d creating and %d answering workers side by side, QPS 1000/burst 2000:\n"+
		"  %.1f s, %.0f writes/s (apiserver counted %.0f writes/s), %.1f claims/s at the floor; "+
		"CPU ms/claim apiserver/etcd/manager/harness %s, other processes %.0f%% of the machine\n\n",
		fl.n, createWorkers, limitWorkers, fl.seconds, fl.writesPerSec, fl.apiserverRate, fl.claimsPerSec, fl.cpu.perClaim(fl.n), othersPct(fl.cpu))
	header := []string{"workload", "N", "seconds", "claims/s", "vs limit", "vs floor", "last/first", "p50 s", "p99 s", "peak MiB",
		"writes/cl", "reads/cl", "409s", "CPU ms/cl api/etcd/mgr/bench", "CPU vs limit", "others"}
	widths := []int{48, 6, 7, 8, 8, 8, 10, 7, 7, 8, 9, 8, 5, 29, 12, 6}
	cells := func(vals []string) string {
		var b strings.Builder
		b.WriteString("|")
		for i, v := range vals {
			if i == 0 {
				fmt.Fprintf(&b, " %-*s |", widths[i], v)
			} else {
				fmt.Fprintf(&b, " %*s |", widths[i], v)
			}
		}
		return b.String()
	}
	fmt.Println(cells(header))
	var rule strings.Builder
	rule.WriteString("|")
	for _, w := range widths {
		rule.WriteString(strings.Repeat("-", w+2) + "|")
	}
	fmt.Println(rule.String())
	for _, r := range rows {
		if r.err != nil {
			fmt.Printf("| %-48s | %6d | FAILED: %v\n", r.name, r.n, r.err)
			continue
		}
		f := func(format string, v float64) string { return fmt.Sprintf(format, v) }
		fmt.Println(cells([]string{r.name, strconv.Itoa(r.n), f("%.1f", r.seconds), f("%.1f", r.rate), f("%.2f", r.rate/l.claimsPerSec), f("%.2f", r.rate/fl.claimsPerSec),
			f("%.2f", r.tailRatio), f("%.2f", r.p50.Seconds()), f("%.2f", r.p99.Seconds()), f("%.0f", r.peakMiB),
			f("%.2f", r.writesPerClaim), f("%.2f", r.readsPerClaim), f("%.0f", r.conflicts), r.cpu.perClaim(r.n),
			f("%.2f", cpuRatio(l, r)), f("%.0f%%", othersPct(r.cpu))}))
	}
	if fill > 0 {
		fmt.Printf("\nfilled pool / empty pool claims/s: %.2f (target >= 0.9)\n", fill)
	}
	if peer != nil && peer.err == nil {
		for _, r := range rows {
			if r.name == "metal3 IPv4 /16" && r.n == peer.n && r.err == nil {
				fmt.Printf("rackwire / ip-address-manager, metal3 IPv4 /16 N=%d: %.2f (target >= 5)\n", r.n, r.rate/peer.rate)
			}
		}
	}
	for _, r := range rows {
		if r.name == "capi IPv6 /64" {
			for _, v4 := range rows {
				if v4.name == "capi IPv4 /16" && v4.n == r.n && v4.rate > 0 {
					fmt.Printf("IPv6 /64 vs IPv4 /16 (capi, N=%d): %.2f (target within 10%%)\n", r.n, r.rate/v4.rate)
				}
			}
		}
	}
	fmt.Println("targets: vs limit and vs floor >= 0.85 at N=5000, last/first >= 0.8; " +
		"the ip-address-manager row runs on a control plane of its own (its CRDs, no webhooks), its vs limit and vs floor " +
		"against rackwire's apiserver's; peak MiB is the manager's VmHWM during the run; " +
		"writes/cl and reads/cl are the apiserver's counts (manager and webhooks) per claim, excluding the claim creates; " +
		"CPU ms/cl is the CPU time of kube-apiserver, etcd, the manager and the harness per claim; CPU vs limit is the " +
		"limit's CPU time per claim over the run's (what vs limit would be if the machine were ours alone, since both are " +
		"CPU-bound on two cores); others is the share of the machine's CPU that went to processes outside the run.")
}

// cpuRatio is the CPU time per claim of the limit over that of the run r.
func cpuRatio(l limitResult, r result) float64 {
	run := float64(r.cpu.ours()) / float64(r.n)
	if run <= 0 {
		return 0
	}
	return float64(l.cpu.ours()) / float64(l.n) / run
}

func othersPct(c cpu) float64 {
	if c.machineTotal <= 0 {
		return 0
	}
	return 100 * float64(c.others()) / float64(c.machineTotal)
}
