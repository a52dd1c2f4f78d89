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

// Package capm3 runs the real Cluster API Provider Metal3 manager (built by hack/capm3-bin.sh)
// against the local control plane with rackwire's IPAM: CAPM3's Metal3DataTemplate asks
// rackwire's IPPools for the addresses it renders into each host's network data. No Cluster
// API, BMO or bootstrap controller runs here: the Cluster, Machines, Metal3Machines,
// BareMetalHosts and Metal3DataClaims those would write are created by the test.
package capm3

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/rackwire/rackwire/internal/controller/ipam"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
	capiipamwebhooks "github.com/rackwire/rackwire/webhooks/capiipam/v1beta2"
	ipamwebhooks "github.com/rackwire/rackwire/webhooks/ipam/v1alpha1"
)

const (
	infra    = "infrastructure.cluster.x-k8s.io/v1beta2"
	cluster  = "cluster-1"
	machines = 3
	timeout  = 2 * time.Minute
)

// env is the control plane with rackwire's IPAM running in-process and CAPM3's manager as a
// child process.
type env struct {
	ctx context.Context
	k8s client.Client
	ns  string
}

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

func start(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "hack/capm3-bin.sh")).Output()
	if err != nil {
		t.Fatalf("building CAPM3 (hack/capm3-bin.sh): %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	capm3, crds := lines[0], lines[1]

	cp, err := controlplane.New(root)
	if err != nil {
		t.Fatal(err)
	}
	// CAPM3's CRDs (its Metal3Machine last, over the copy in test/crds) and Cluster API's core
	// ones at the version CAPM3 pins.
	cp.CRDDirectoryPaths = append(cp.CRDDirectoryPaths, crds)
	cfg, err := cp.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	if err := controlplane.InstallPolicies(ctx, cfg, root); err != nil {
		t.Fatal(err)
	}
	// test/crds' Metal3Machine is installed first and CAPM3's replaces it: envtest's wait for
	// the CRDs can pass on the first one, before v1beta2 is served.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var seen string
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		list, err := dc.ServerResourcesForGroupVersion(infra)
		if err != nil {
			seen = err.Error()
			return false, nil
		}
		var kinds []string
		for _, r := range list.APIResources {
			if r.Kind == "Metal3Machine" {
				return true, nil
			}
			kinds = append(kinds, r.Kind)
		}
		seen = "served kinds " + strings.Join(kinds, ",")
		return false, nil
	}); err != nil {
		t.Fatalf("%s Metal3Machine is not served: %v (discovery last said: %s; %s)", infra, err, seen, crdState(ctx, cfg))
	}

	mgr, err := ctrl.NewManager(cfg, controlplane.ManagerOptions(cp))
	if err != nil {
		t.Fatal(err)
	}
	for _, setup := range []func(ctrl.Manager) error{ipam.Setup, ipamwebhooks.Setup, capiipamwebhooks.Setup} {
		if err := setup(mgr); err != nil {
			t.Fatal(err)
		}
	}
	stop, err := controlplane.Run(ctx, mgr, cp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(time.Minute); err != nil {
			t.Error(err)
		}
	})

	runCAPM3(t, cp, capm3)

	k8s, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "capm3-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return &env{ctx: ctx, k8s: k8s, ns: ns.Name}
}

// runCAPM3 starts CAPM3's manager as an admin of cp, its webhook server on a free port with
// envtest's serving certificate (no webhook configuration of CAPM3's is installed: the test
// writes objects complete), and stops it at cleanup; its log is shown if the test fails.
func runCAPM3(t *testing.T, cp *envtest.Environment, bin string) {
	t.Helper()
	user, err := cp.ControlPlane.AddUser(envtest.User{Name: "capm3", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "capm3.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--kubeconfig="+kubeconfig,
		fmt.Sprintf("--webhook-port=%d", freePort(t)),
		"--webhook-cert-dir="+cp.WebhookInstallOptions.LocalServingCertDir,
		"--health-addr=127.0.0.1:0",
		"--diagnostics-address=127.0.0.1:0", "--insecure-diagnostics",
		"--leader-elect=false", "--v=2")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("CAPM3's log (last 8 kB):\n%s", tail(b, 8<<10))
			}
		}
	})
	select {
	case err := <-exited:
		t.Fatalf("CAPM3's manager exited at start: %v", err)
	case <-time.After(2 * time.Second):
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// obj builds an unstructured object from YAML with the test's namespace.
func (e *env) obj(t *testing.T, doc string, args ...any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte(fmt.Sprintf(doc, args...)), &u.Object); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	u.SetNamespace(e.ns)
	return u
}

func (e *env) create(t *testing.T, u client.Object) {
	t.Helper()
	if err := e.k8s.Create(e.ctx, u); err != nil {
		t.Fatalf("creating %T %s: %v", u, u.GetName(), err)
	}
}

func eventually(t *testing.T, what string, f func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, err := f()
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not reached (last error: %v)", what, last)
	}
}

// crdState says what the apiserver holds for Metal3Machine's CRD, for a failure that would
// otherwise only say that discovery never listed it.
func crdState(ctx context.Context, cfg *rest.Config) string {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err.Error()
	}
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := c.Get(ctx, client.ObjectKey{Name: "metal3machines.infrastructure.cluster.x-k8s.io"}, crd); err != nil {
		return "reading its CRD: " + err.Error()
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var names []string
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok {
			names = append(names, fmt.Sprintf("%v(served=%v)", m["name"], m["served"]))
		}
	}
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	return fmt.Sprintf("its CRD has versions %s and conditions %v", strings.Join(names, " "), conditions)
}
