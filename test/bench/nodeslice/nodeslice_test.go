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

package nodeslice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	nodeslicewebhooks "github.com/rackwire/rackwire/webhooks/nodeslice/v1alpha1"
)

const (
	networks    = 5
	poolNS      = "kube-system"
	creators    = 16
	sliceOfNets = "/29"
)

var nadNamespaces = []string{"bench-a", "bench-b"}

// controller is one of the two node-slice controllers under test.
type controller struct {
	name     string
	webhooks bool
	start    func(ctx context.Context, r *run) (*exec.Cmd, error)
}

// run is one control plane, one controller and one count of Nodes.
type run struct {
	root, dir, kubeconfig, manager, bins string
	// managerKubeconfig is rackwire's: the user its manager has when deployed, whose
	// writes skip the NodeSlicePool webhook (config/webhook/nodeslicepool.yaml).
	managerKubeconfig string
	cp                *envtest.Environment
	c                 client.WithWatch
}

type result struct {
	controller      string
	nodes           int
	total, p50, p99 time.Duration
	writes          int
	bytes           int64
	create          time.Duration
	cpu             cpuTimes
	missing         int
}

func BenchmarkNodeSlices(b *testing.B) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	counts := []int{1000, 5000}
	if s := os.Getenv("BENCH_NODES"); s != "" {
		counts = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("BENCH_NODES: %v", err)
			}
			counts = append(counts, n)
		}
	}
	timeout := 10 * time.Minute
	if s := os.Getenv("BENCH_TIMEOUT"); s != "" {
		var err error
		if timeout, err = time.ParseDuration(s); err != nil {
			b.Fatalf("BENCH_TIMEOUT: %v", err)
		}
	}
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "hack/cni-bins.sh")).Output()
	if err != nil {
		b.Fatalf("building whereabouts' node-slice controller: %v", err)
	}
	bins := strings.TrimSpace(string(out))
	dir := os.Getenv("BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	manager := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", manager, "./cmd/manager")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("building the manager: %v", err)
	}

	var results []result
	// Counts outside, controllers inside: the two controllers' runs of one count are
	// next to each other in time, so load from other processes of a shared machine falls
	// on both alike.
	for _, n := range counts {
		for _, ctl := range selected() {
			r := &run{root: root, dir: filepath.Join(dir, fmt.Sprintf("%s-%d", ctl.name, n)), manager: manager, bins: bins}
			res, err := r.measure(b.Context(), ctl, n, timeout)
			if err != nil {
				b.Fatalf("%s, %d Nodes: %v", ctl.name, n, err)
			}
			results = append(results, res)
			fmt.Println(res.line())
		}
	}
	fmt.Println()
	fmt.Printf("%-12s %6s %12s %9s %9s %12s %15s %15s %8s %7s %9s %11s\n", "controller", "nodes", "all sliced", "p50", "p99", "writes/node", "ctrl CPU/node", "apisrv+etcd/node", "missing",
		"writes", "MB", "Nodes made")
	for _, r := range results {
		fmt.Println(r.line())
	}
	for _, ctl := range []string{rackwire.name, whereabouts.name} {
		var small, large *result
		for i := range results {
			if results[i].controller != ctl {
				continue
			}
			if small == nil || results[i].nodes < small.nodes {
				small = &results[i]
			}
			if large == nil || results[i].nodes > large.nodes {
				large = &results[i]
			}
		}
		if small == nil || small == large {
			continue
		}
		fmt.Printf("%s: per-node cost at %d over %d Nodes: time %.2fx, controller CPU %.2fx, apiserver+etcd CPU %.2fx\n", ctl, large.nodes, small.nodes,
			ratio(large.total, large.nodes, small.total, small.nodes),
			ratio(large.cpu.controller, large.nodes, small.cpu.controller, small.nodes),
			ratio(large.cpu.apiserver+large.cpu.etcd, large.nodes, small.cpu.apiserver+small.cpu.etcd, small.nodes))
	}
}

func ratio(a time.Duration, na int, b time.Duration, nb int) float64 {
	if b == 0 {
		return 0
	}
	return (float64(a) / float64(na)) / (float64(b) / float64(nb))
}

func (r result) line() string {
	return fmt.Sprintf("%-12s %6d %12s %9s %9s %12.2f %15s %15s %8d %7d %9.1f %11s", r.controller, r.nodes, r.total.Round(time.Millisecond),
		r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), float64(r.writes)/float64(r.nodes),
		(r.cpu.controller / time.Duration(r.nodes)).Round(time.Microsecond),
		((r.cpu.apiserver + r.cpu.etcd) / time.Duration(r.nodes)).Round(time.Microsecond), r.missing,
		r.writes, float64(r.bytes)/1e6, r.create.Round(time.Millisecond))
}

// nadConfig is network k's configuration. whereabouts' controller loads a NAD's IPAM
// configuration as its CNI binary does, so it needs the flat file naming a kubeconfig
// (configuration_path); it never reads the kubeconfig.
func nadConfig(k int, flat string) string {
	return fmt.Sprintf(`{"cniVersion":"1.0.0","name":"bench-net-%d","type":"macvlan","master":"eth0","ipam":{"type":"whereabouts","range":"10.%d.0.0/16",`+
		`"node_slice_size":%q,"network_name":"bench-net-%d","configuration_path":%q}}`, k, 100+k, sliceOfNets, k, flat)
}

func (r *run) measure(ctx context.Context, ctl controller, nodes int, timeout time.Duration) (res result, err error) {
	res = result{controller: ctl.name, nodes: nodes}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return res, err
	}
	if r.cp, err = controlplane.New(r.root); err != nil {
		return res, err
	}
	if !ctl.webhooks {
		r.cp.WebhookInstallOptions.Paths = nil
	}
	cfg, err := r.cp.Start()
	if err != nil {
		return res, err
	}
	defer func() { _ = r.cp.Stop() }()
	cfg.QPS, cfg.Burst = 2000, 4000
	if r.c, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		return res, err
	}
	user, err := r.cp.AddUser(envtest.User{Name: "bench-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return res, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return res, err
	}
	r.kubeconfig = filepath.Join(r.dir, "kubeconfig")
	if err := os.WriteFile(r.kubeconfig, kc, 0o600); err != nil {
		return res, err
	}
	mgrUser, err := r.cp.AddUser(envtest.User{Name: nodeslicewebhooks.ManagerUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return res, err
	}
	if kc, err = mgrUser.KubeConfig(); err != nil {
		return res, err
	}
	r.managerKubeconfig = filepath.Join(r.dir, "manager-kubeconfig")
	if err := os.WriteFile(r.managerKubeconfig, kc, 0o600); err != nil {
		return res, err
	}
	for _, ns := range nadNamespaces {
		if err := r.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return res, err
		}
	}
	flat := filepath.Join(r.dir, "whereabouts.conf")
	if err := os.WriteFile(flat, fmt.Appendf(nil, `{"kubernetes":{"kubeconfig":%q}}`, r.kubeconfig), 0o600); err != nil {
		return res, err
	}
	cmd, err := ctl.start(ctx, r)
	if err != nil {
		return res, err
	}
	defer stopProcess(cmd)
	for k := range networks {
		for _, ns := range nadNamespaces {
			nad := &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("bench-net-%d", k)},
				Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: nadConfig(k, flat)}}
			if err := r.c.Create(ctx, nad); err != nil {
				return res, err
			}
		}
	}
	if err := r.waitPools(ctx); err != nil {
		return res, err
	}

	w := newWatcher(nodes)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := w.start(wctx, r.c); err != nil {
		return res, err
	}
	before := cpuNow(cmd.Process.Pid)
	start := time.Now()
	created := r.createNodes(ctx, nodes)
	res.create = time.Since(start)
	fmt.Fprintf(os.Stderr, "%s: %d Nodes created in %s (%d pool writes meanwhile)\n", ctl.name, nodes, res.create.Round(time.Millisecond), w.writesSoFar())
	var done bool
	select {
	case <-w.done:
		done = true
	case <-time.After(timeout):
	}
	res.total = w.last().Sub(start)
	if !done {
		res.total = time.Since(start)
	}
	res.cpu = cpuNow(cmd.Process.Pid).since(before)
	res.writes, res.bytes, res.missing = w.result()
	res.p50, res.p99 = w.latencies(created)
	return res, nil
}

func (r *run) waitPools(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var list nodeslicev1alpha1.NodeSlicePoolList
		if err := r.c.List(ctx, &list, client.InNamespace(poolNS)); err == nil && len(list.Items) == networks {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("the controller did not create the 5 NodeSlicePools within 2m")
}

// createNodes creates the Nodes with parallel clients and returns when each was created.
func (r *run) createNodes(ctx context.Context, n int) map[string]time.Time {
	created := make(map[string]time.Time, n)
	var mu sync.Mutex
	next := make(chan int)
	var wg sync.WaitGroup
	for range creators {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("bench-node-%05d", i)
				if err := r.c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
					fmt.Fprintf(os.Stderr, "creating %s: %v\n", name, err)
					continue
				}
				mu.Lock()
				created[name] = time.Now()
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return created
}

// watcher records when each Node first shows up in each network's pool.
type watcher struct {
	mu     sync.Mutex
	want   int
	seen   map[string]map[string]time.Time // network -> node -> first seen
	writes int
	bytes  int64 // the written pools, as JSON
	lastAt time.Time
	done   chan struct{}
}

func newWatcher(nodes int) *watcher {
	return &watcher{want: nodes * networks, seen: map[string]map[string]time.Time{}, done: make(chan struct{})}
}

func (w *watcher) start(ctx context.Context, c client.WithWatch) error {
	var list nodeslicev1alpha1.NodeSlicePoolList
	if err := c.List(ctx, &list, client.InNamespace(poolNS)); err != nil {
		return err
	}
	rv := list.ResourceVersion
	go func() {
		for ctx.Err() == nil {
			wi, err := c.Watch(ctx, &nodeslicev1alpha1.NodeSlicePoolList{}, client.InNamespace(poolNS), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range wi.ResultChan() {
				p, ok := ev.Object.(*nodeslicev1alpha1.NodeSlicePool)
				if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
					continue
				}
				rv = p.ResourceVersion
				w.note(p)
			}
			wi.Stop()
		}
	}()
	return nil
}

func (w *watcher) note(p *nodeslicev1alpha1.NodeSlicePool) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if raw, err := json.Marshal(p); err == nil {
		w.bytes += int64(len(raw))
	}
	seen := w.seen[p.Name]
	if seen == nil {
		seen = map[string]time.Time{}
		w.seen[p.Name] = seen
	}
	before := w.count()
	for _, a := range p.Status.Allocations {
		if _, ok := seen[a.NodeName]; a.NodeName != "" && !ok {
			seen[a.NodeName] = now
			w.lastAt = now
		}
	}
	if before < w.want && w.count() >= w.want {
		close(w.done)
	}
}

func (w *watcher) count() int {
	n := 0
	for _, s := range w.seen {
		n += len(s)
	}
	return n
}

func (w *watcher) last() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastAt
}

func (w *watcher) result() (writes int, bytes int64, missing int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes, w.bytes, w.want - w.count()
}

// latencies are the p50 and p99 over Nodes of creation to holding a slice of every network
// (Nodes still missing one count as never).
func (w *watcher) latencies(created map[string]time.Time) (p50, p99 time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var all []time.Duration
	for node, at := range created {
		var worst time.Duration
		for k := range networks {
			seen, ok := w.seen[fmt.Sprintf("bench-net-%d", k)][node]
			if !ok {
				worst = time.Duration(1<<63 - 1)
				break
			}
			worst = max(worst, seen.Sub(at))
		}
		all = append(all, worst)
	}
	if len(all) == 0 {
		return 0, 0
	}
	slices.Sort(all)
	return all[len(all)*50/100], all[min(len(all)-1, len(all)*99/100)]
}

var rackwire = controller{name: "rackwire", webhooks: true, start: func(ctx context.Context, r *run) (*exec.Cmd, error) {
	probe, err := freePort()
	if err != nil {
		return nil, err
	}
	hooks := r.cp.WebhookInstallOptions
	cmd := exec.Command(r.manager,
		"--kubeconfig="+r.managerKubeconfig, "--metrics-bind-address=0", "--health-probe-bind-address="+probe,
		"--webhook-host="+hooks.LocalServingHost, "--webhook-port="+strconv.Itoa(hooks.LocalServingPort),
		"--webhook-cert-dir="+hooks.LocalServingCertDir, "--leader-elect=false", "--nodeslice-namespace="+poolNS)
	if err := startLogged(cmd, filepath.Join(r.dir, "manager.log")); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+probe+"/readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	stopProcess(cmd)
	return nil, errors.New("the manager was not ready within 2m")
}}

var whereabouts = controller{name: "whereabouts", start: func(_ context.Context, r *run) (*exec.Cmd, error) {
	cmd := exec.Command(filepath.Join(r.bins, "nodeslicecontroller"), "--kubeconfig="+r.kubeconfig)
	cmd.Env = append(os.Environ(), "WHEREABOUTS_NAMESPACE="+poolNS)
	return cmd, startLogged(cmd, filepath.Join(r.dir, "nodeslicecontroller.log"))
}}

func startLogged(cmd *exec.Cmd, log string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return cmd.Start()
}

func stopProcess(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// selected are the controllers BENCH_CONTROLLERS names (comma-separated), both by default.
func selected() []controller {
	all := []controller{rackwire, whereabouts}
	want := os.Getenv("BENCH_CONTROLLERS")
	if want == "" {
		return all
	}
	return slices.DeleteFunc(all, func(c controller) bool { return !slices.Contains(strings.Split(want, ","), c.name) })
}

func (w *watcher) writesSoFar() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}
