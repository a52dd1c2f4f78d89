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

package ipamclaim

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/ipamclaim"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	kubevirtwebhooks "github.com/rackwire/rackwire/webhooks/kubevirt/v1"
)

const (
	poolNS   = "cni-pools"
	vmNS     = "vms"
	floorNS  = "floor"
	creators = 16
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func BenchmarkVMBurst(b *testing.B) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	n := envInt("BENCH_VMS", 1000)
	timeout := 10 * time.Minute
	if d, err := time.ParseDuration(os.Getenv("BENCH_TIMEOUT")); err == nil {
		timeout = d
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	root, err := controlplane.RepoRoot(".")
	if err != nil {
		b.Fatal(err)
	}
	cp, err := controlplane.New(root)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := cp.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	mgrCfg := rest.CopyConfig(cfg)
	// The harness's client must never be what limits a figure; the manager's is as it ships.
	cfg.QPS, cfg.Burst = 1000, 2000
	mgrCfg.QPS, mgrCfg.Burst = 500, 1000
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	for _, ns := range []string{poolNS, vmNS, floorNS} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
	}

	var writes atomic.Int64
	opts := controlplane.ManagerOptions(cp)
	opts.NewClient = func(config *rest.Config, o client.Options) (client.Client, error) {
		inner, err := client.NewWithWatch(config, o)
		if err != nil {
			return nil, err
		}
		return interceptor.NewClient(inner, countWrites(&writes)), nil
	}
	mgr, err := ctrl.NewManager(mgrCfg, opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := ipamclaim.SetupWith(mgr, ipamclaim.Options{Namespace: poolNS}); err != nil {
		b.Fatal(err)
	}
	if err := kubevirtwebhooks.Setup(mgr); err != nil {
		b.Fatal(err)
	}
	stop, err := controlplane.Run(ctx, mgr, cp)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stop(time.Minute) }()

	loadBefore := loadAverage()
	b.ResetTimer()
	floor, err := measureFloor(ctx, c, n, false)
	if err != nil {
		b.Fatal(err)
	}
	// The burst's window holds the users' VM creates too: the floor that counts them does the
	// same four writes a VM costs the apiserver in all.
	floorVM, err := measureFloor(ctx, c, n, true)
	if err != nil {
		b.Fatal(err)
	}
	// The manager's client settings: the floor's writer is what a controller could at best be.
	writer, err := client.NewWithWatch(mgrCfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	latFloor, err := latencyFloor(ctx, c, writer, n)
	if err != nil {
		b.Fatal(err)
	}
	reqBefore, err := apiserverRequests(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	queuesBefore, err := readQueues()
	if err != nil {
		b.Fatal(err)
	}
	res, err := burst(ctx, c, n, timeout, &writes)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	loadAfter := loadAverage()
	reqAfter, err := apiserverRequests(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	queuesAfter, err := readQueues()
	if err != nil {
		b.Fatal(err)
	}
	// The machine's load swings within a minute (other jobs share its cores): the floor that
	// counts the VM creates is taken again after the burst, so that the burst is bracketed.
	floorVMAfter, err := measureFloorAgain(ctx, c, n)
	if err != nil {
		b.Fatal(err)
	}
	floorRate := float64(n) / floor.Seconds()
	floorVMRate := float64(n) / floorVM.Seconds()
	fmt.Printf("\n%-22s %8s %10s %10s %10s %10s %12s %8s %14s %8s\n", "persistent IPs", "VMs", "claims/s", "p50", "p99", "writes/VM",
		"floor/s", "ratio", "floor+VM/s", "ratio")
	fmt.Printf("%-22s %8d %10.1f %10s %10s %10.2f %12.1f %8.2f %14.1f %8.2f\n", "VM burst, one /16", n, res.rate,
		res.p50.Round(time.Millisecond), res.p99.Round(time.Millisecond), res.writesPerVM, floorRate, res.rate/floorRate,
		floorVMRate, res.rate/floorVMRate)
	fmt.Printf("  floor: the manager's three writes per VM by a plain client; floor+VM: the user's VM create as well\n")
	floorVMAfterRate := float64(n) / floorVMAfter.Seconds()
	fmt.Printf("  floor+VM taken again after the burst: %.1f/s, ratio %.2f\n", floorVMAfterRate, res.rate/floorVMAfterRate)
	fmt.Printf("  latency floor (the users' creates as in the burst, a plain client reacting to each VM with its three writes): p50 %s, p99 %s; rackwire's p99 / the floor's: %.2f\n",
		latFloor[0].Round(time.Millisecond), latFloor[1].Round(time.Millisecond), res.p99.Seconds()/latFloor[1].Seconds())
	fmt.Printf("  load average (1, 5, 15 min) before the floors: %s; after the burst: %s\n", loadBefore, loadAfter)
	fmt.Printf("  events: %d written during the burst (%.2f per VM)\n", res.events, float64(res.events)/float64(n))
	fmt.Printf("  VM creates took %s; p50/p99 from a VM's creation to its claim's creation %s/%s, from the claim's creation to status.ips %s/%s\n",
		res.creates.Round(time.Millisecond), res.toClaim[0].Round(time.Millisecond), res.toClaim[1].Round(time.Millisecond),
		res.toIPs[0].Round(time.Millisecond), res.toIPs[1].Round(time.Millisecond))
	writeKinds.Range(func(k, v any) bool {
		fmt.Printf("  manager writes: %-60s %6.2f per VM\n", k, float64(v.(*atomic.Int64).Load())/float64(n))
		return true
	})
	// Counted by the apiserver from the burst's start until a while after its end: the users'
	// VM creates and every client's writes, with their codes (409: a conflict retried).
	printRequests(reqBefore, reqAfter, n)
	printQueues(queuesBefore, queuesAfter)
	b.ReportMetric(res.rate, "claims/s")
	b.ReportMetric(res.rate/floorRate, "ratio")
	b.ReportMetric(res.rate/floorVMRate, "ratio+VM")
	b.ReportMetric(res.p99.Seconds(), "p99-s")
	b.ReportMetric(latFloor[1].Seconds(), "floor-p99-s")
}

// writeKinds counts the manager's writes by verb and kind, printed with the table.
var writeKinds sync.Map

func noteWrite(verb string, obj client.Object) {
	key := fmt.Sprintf("%s %T", verb, obj)
	v, _ := writeKinds.LoadOrStore(key, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// countWrites counts every write the manager's client sends.
func countWrites(n *atomic.Int64) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			n.Add(1)
			noteWrite("create", obj)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			n.Add(1)
			noteWrite("update", obj)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			n.Add(1)
			noteWrite("patch", obj)
			return c.Patch(ctx, obj, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			n.Add(1)
			noteWrite("delete", obj)
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			n.Add(1)
			noteWrite("update status", obj)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			n.Add(1)
			noteWrite("patch status", obj)
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	}
}

// measureFloorAgain is measureFloor with the VM creates, under other names.
func measureFloorAgain(ctx context.Context, c client.Client, n int) (time.Duration, error) {
	return measureFloorNamed(ctx, c, n, true, "vmg", 62)
}

// measureFloor makes, with a plain client, the three writes rackwire makes per VM, for n
// claims of a network rackwire does not serve; withVM, the user's VM create before them (a VM
// on no secondary network, which rackwire reads and leaves alone).
func measureFloor(ctx context.Context, c client.Client, n int, withVM bool) (time.Duration, error) {
	prefix, subnet := "vm", 60
	if withVM {
		prefix, subnet = "vmf", 61
	}
	return measureFloorNamed(ctx, c, n, withVM, prefix, subnet)
}

func measureFloorNamed(ctx context.Context, c client.Client, n int, withVM bool, prefix string, subnet int) (time.Duration, error) {
	start := time.Now()
	err := parallel(n, func(i int) error {
		if withVM {
			if err := c.Create(ctx, floorVM(prefix, i)); err != nil {
				return err
			}
		}
		return floorWrites(ctx, c, prefix, i, subnet)
	})
	return time.Since(start), err
}

// floorVM is a user's VM of the floors: on no secondary network, which rackwire reads and
// leaves alone.
func floorVM(prefix string, i int) *virtv1.VirtualMachine {
	vm := newVM(i)
	vm.Name, vm.Namespace = fmt.Sprintf("%s-%d", prefix, i), floorNS
	vm.Spec.Template.Spec.Networks = vm.Spec.Template.Spec.Networks[:1]
	vm.Spec.Template.Spec.Domain.Devices.Interfaces = vm.Spec.Template.Spec.Domain.Devices.Interfaces[:1]
	return vm
}

// floorWrites makes, with a plain client, the three writes rackwire makes for VM prefix-i:
// its claim, the address's reservation (10.subnet.x.y) and the claim's status.
func floorWrites(ctx context.Context, c client.Client, prefix string, i, subnet int) error {
	claim := &ipamclaimsv1alpha1.IPAMClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%d.blue", prefix, i), Namespace: floorNS,
			// The same metadata under keys of the benchmark's own: rackwire would otherwise
			// take these claims for a gone VM's and write to them.
			Labels:     map[string]string{"bench.rackwire.metal3.io/vm": fmt.Sprintf("%s-%d", prefix, i)},
			Finalizers: []string{"bench.rackwire.metal3.io/persistent-ipam", "bench.rackwire.metal3.io/ipamclaim"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: fmt.Sprintf("%s-%d", prefix, i),
				UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: ipamclaimsv1alpha1.IPAMClaimSpec{Network: "floor-net"},
	}
	if err := c.Create(ctx, claim); err != nil {
		return err
	}
	addr := fmt.Sprintf("10.%d.%d.%d", subnet, i/250, i%250+1)
	orip := &nodeslicev1alpha1.OverlappingRangeIPReservation{
		ObjectMeta: metav1.ObjectMeta{Name: "floor-" + addr, Namespace: poolNS, Labels: map[string]string{
			ipamclaim.LabelClaim: claim.Name, ipamclaim.LabelClaimNamespace: floorNS, ipamclaim.LabelManagedBy: "rackwire",
		}},
		Spec: nodeslicev1alpha1.OverlappingRangeIPReservationSpec{PodRef: floorNS + "/" + claim.Name},
	}
	if err := c.Create(ctx, orip); err != nil {
		return err
	}
	before := claim.DeepCopy()
	claim.Status.IPs = []string{addr + "/16"}
	return c.Status().Patch(ctx, claim, client.MergeFrom(before))
}

type result struct {
	rate        float64
	p50, p99    time.Duration
	writesPerVM float64
	// events the manager wrote about the VMs and claims by the time the last claim had its
	// addresses: writes to the apiserver too.
	events int
	// creates is how long the users' VM creates took; toClaim and toIPs split the latency
	// (p50, p99) at the claim's creation.
	creates        time.Duration
	toClaim, toIPs [2]time.Duration
}

func burst(ctx context.Context, c client.WithWatch, n int, timeout time.Duration, writes *atomic.Int64) (result, error) {
	nad := &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "blue", Namespace: vmNS},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","name":"blue-net","type":"bridge",` +
			`"allowPersistentIPs":true,"ipam":{"type":"rackwire","range":"10.50.0.0/16","gateway":"10.50.0.1"}}`},
	}
	if err := c.Create(ctx, nad); err != nil {
		return result{}, err
	}
	seen := &allocations{at: map[string]time.Time{}, ips: map[string]string{}, made: map[string]time.Time{}}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := seen.watch(wctx, c); err != nil {
		return result{}, err
	}

	w0 := writes.Load()
	created := make([]time.Time, n)
	start := time.Now()
	if err := parallel(n, func(i int) error {
		created[i] = time.Now()
		return c.Create(ctx, newVM(i))
	}); err != nil {
		return result{}, err
	}
	creates := time.Since(start)
	deadline := time.Now().Add(timeout)
	for seen.count() < n {
		if time.Now().After(deadline) {
			return result{}, fmt.Errorf("after %s only %d of %d claims had addresses", timeout, seen.count(), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopWatch()
	seen.mu.Lock()
	defer seen.mu.Unlock()
	var last time.Time
	lat := make([]time.Duration, 0, n)
	var toClaim, toIPs []time.Duration
	distinct := map[string]bool{}
	for i := range n {
		name := fmt.Sprintf("vm-%d.blue", i)
		at := seen.at[name]
		last = maxTime(last, at)
		lat = append(lat, at.Sub(created[i]))
		if made, ok := seen.made[name]; ok {
			toClaim, toIPs = append(toClaim, made.Sub(created[i])), append(toIPs, at.Sub(made))
		}
		distinct[seen.ips[name]] = true
	}
	if len(distinct) != n {
		return result{}, fmt.Errorf("%d claims share %d addresses", n, len(distinct))
	}
	slices.Sort(lat)
	var evs eventsv1.EventList
	if err := c.List(ctx, &evs, client.InNamespace(vmNS)); err != nil {
		return result{}, err
	}
	return result{
		creates:     creates,
		toClaim:     percentiles(toClaim),
		toIPs:       percentiles(toIPs),
		events:      len(evs.Items),
		rate:        float64(n) / last.Sub(start).Seconds(),
		p50:         lat[n*50/100],
		p99:         lat[min(n-1, n*99/100)],
		writesPerVM: float64(writes.Load()-w0) / float64(n),
	}, nil
}

// loadAverage is the machine's, as /proc/loadavg says: the figures swing with it.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func percentiles(d []time.Duration) [2]time.Duration {
	if len(d) == 0 {
		return [2]time.Duration{}
	}
	slices.Sort(d)
	return [2]time.Duration{d[len(d)*50/100], d[min(len(d)-1, len(d)*99/100)]}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func newVM(i int) *virtv1.VirtualMachine {
	return &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("vm-%d", i), Namespace: vmNS},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy: ptr.To(virtv1.RunStrategyHalted),
			Template: &virtv1.VirtualMachineInstanceTemplateSpec{Spec: virtv1.VirtualMachineInstanceSpec{
				Domain: virtv1.DomainSpec{Devices: virtv1.Devices{Interfaces: []virtv1.Interface{
					{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}}},
					{Name: "blue", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}},
				}}},
				Networks: []virtv1.Network{
					{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}},
					{Name: "blue", NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: "blue"}}},
				},
			}},
		},
	}
}

// allocations records when each claim was first seen (made) and first showed status.ips (at).
type allocations struct {
	// ns is the namespace watched, vmNS when empty.
	ns   string
	mu   sync.Mutex
	at   map[string]time.Time
	made map[string]time.Time
	ips  map[string]string
}

func (a *allocations) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

func (a *allocations) note(c *ipamclaimsv1alpha1.IPAMClaim) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.made[c.Name]; !ok {
		a.made[c.Name] = time.Now()
	}
	if len(c.Status.IPs) == 0 {
		return
	}
	if _, ok := a.at[c.Name]; !ok {
		a.at[c.Name], a.ips[c.Name] = time.Now(), c.Status.IPs[0]
	}
}

// watch follows the claims of the VMs' namespace from now on, starting again where it left
// off when the apiserver ends a watch.
func (a *allocations) watch(ctx context.Context, c client.WithWatch) error {
	ns := a.ns
	if ns == "" {
		ns = vmNS
	}
	var list ipamclaimsv1alpha1.IPAMClaimList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return err
	}
	rv := list.ResourceVersion
	go func() {
		for ctx.Err() == nil {
			w, err := c.Watch(ctx, &ipamclaimsv1alpha1.IPAMClaimList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				if claim, ok := ev.Object.(*ipamclaimsv1alpha1.IPAMClaim); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					rv = claim.ResourceVersion
					a.note(claim)
				}
			}
			w.Stop()
		}
	}()
	return nil
}

// parallel runs fn for 0..n-1 on creators goroutines and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range creators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
