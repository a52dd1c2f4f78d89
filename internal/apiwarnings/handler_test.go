package apiwarnings_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	"github.com/rackwire/rackwire/internal/apiwarnings"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
)

// lines collects what a logger was told.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.all = append(l.all, args)
	}, funcr.Options{})
}

func (l *lines) count(subs ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.all {
		if !slices.ContainsFunc(subs, func(sub string) bool { return !strings.Contains(s, sub) }) {
			n++
		}
	}
	return n
}

// TestExpectedWarningsOnce writes claims and addresses carrying ip-address-manager's
// finalizer names through the real apiserver: each name's warning is logged once however
// many writes carry it, while another warning (an unknown field) is logged every time.
func TestExpectedWarningsOnce(t *testing.T) {
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	env, err := controlplane.New(root)
	if err != nil {
		t.Fatal(err)
	}
	// No manager serves webhooks here; only the apiserver's own warnings are under test.
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()

	apiwarnings.Install(cfg)
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	var got lines
	ctx := logr.NewContext(context.Background(), got.logger())

	ns := &corev1.Namespace{}
	ns.GenerateName = "warnings-"
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		claim := &ipamv1alpha1.IPClaim{}
		claim.Name, claim.Namespace = fmt.Sprintf("claim-%d", i), ns.Name
		claim.Spec.Pool.Name = "pool"
		// Some messages may name the finalizer's index; it goes second on some.
		claim.Finalizers = []string{"ipclaim.ipam.metal3.io"}
		if i%2 == 1 {
			claim.Finalizers = []string{"example.com/keep", "ipclaim.ipam.metal3.io"}
		}
		if err := c.Create(ctx, claim); err != nil {
			t.Fatal(err)
		}
		claim.Labels = map[string]string{"n": fmt.Sprint(i)}
		if err := c.Update(ctx, claim); err != nil {
			t.Fatal(err)
		}
		pool := &ipamv1alpha1.IPPool{}
		pool.Name, pool.Namespace = fmt.Sprintf("pool-%d", i), ns.Name
		pool.Finalizers = []string{"ippool.ipam.metal3.io"}
		pool.Spec.NamePrefix = "p"
		if err := c.Create(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "ipam.metal3.io/v1alpha1", "kind": "IPClaim",
			"metadata": map[string]any{"name": fmt.Sprintf("odd-%d", i), "namespace": ns.Name},
			"spec":     map[string]any{"pool": map[string]any{"name": "pool"}, "bogus": "x"},
		}}
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}

	if n := got.count("ipclaim.ipam.metal3.io", "prefer a domain-qualified finalizer name"); n != 1 {
		t.Errorf("the IPClaim finalizer's warning was logged %d times, want once; log: %q", n, got.all)
	}
	if n := got.count("ippool.ipam.metal3.io", "prefer a domain-qualified finalizer name"); n != 1 {
		t.Errorf("the IPPool finalizer's warning was logged %d times, want once; log: %q", n, got.all)
	}
	if n := got.count(`bogus`); n != 2 {
		t.Errorf("the unknown-field warning was logged %d times, want each time (2); log: %q", n, got.all)
	}
}
