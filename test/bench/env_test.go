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
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
)

// env is one control plane with the built manager binary running against it.
type env struct {
	root, dir string
	cp        *envtest.Environment
	cfg       *rest.Config
	c         client.WithWatch
	kube      kubernetes.Interface

	mgr       *exec.Cmd
	mgrDone   chan struct{}
	mgrLog    string
	PprofAddr string
	// peer is set for the control plane running Metal3's ip-address-manager instead of
	// rackwire: its claims have no conditions and its pools no usage in their status.
	peer    bool
	stopped bool
}

const managerUser = "rackwire-manager"

func startEnv(ctx context.Context, dir string) (*env, error) {
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		return nil, err
	}
	e := &env{root: root, dir: dir}
	bin := filepath.Join(dir, "manager")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/manager")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building the manager: %w", err)
	}

	if e.cp, err = controlplane.New(root); err != nil {
		return nil, err
	}
	if e.cfg, err = e.cp.Start(); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	if err := controlplane.InstallPolicies(ctx, e.cfg, root); err != nil {
		e.stop()
		return nil, err
	}
	// The harness's own client must never be what limits a figure.
	e.cfg.QPS, e.cfg.Burst = 1000, 2000
	if e.c, err = client.NewWithWatch(e.cfg, client.Options{Scheme: scheme.New()}); err != nil {
		return nil, err
	}
	if e.kube, err = kubernetes.NewForConfig(e.cfg); err != nil {
		return nil, err
	}
	if err := e.startManager(ctx, bin); err != nil {
		e.stop()
		return nil, err
	}
	return e, nil
}

// startManager runs the manager binary as it ships (default flags) under the generated
// manager-role, serving the webhooks the control plane calls.
func (e *env) startManager(ctx context.Context, bin string) error {
	objs, err := controlplane.ReadObjects(filepath.Join(e.root, "config/rbac/role.yaml"))
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := e.c.Create(ctx, o); err != nil {
			return fmt.Errorf("installing %s: %w", o.GetName(), err)
		}
	}
	binding := &rbacv1.ClusterRoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "manager-role"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: managerUser}},
	}
	binding.Name = "manager-rolebinding"
	if err := e.c.Create(ctx, binding); err != nil {
		return err
	}
	user, err := e.cp.AddUser(envtest.User{Name: managerUser}, nil)
	if err != nil {
		return err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(e.dir, "manager.kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}
	probe, err := freePort()
	if err != nil {
		return err
	}
	if e.PprofAddr, err = freePort(); err != nil {
		return err
	}
	hooks := e.cp.WebhookInstallOptions
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=" + probe,
		"--pprof-bind-address=" + e.PprofAddr,
		"--webhook-host=" + hooks.LocalServingHost,
		"--webhook-port=" + strconv.Itoa(hooks.LocalServingPort),
		"--webhook-cert-dir=" + hooks.LocalServingCertDir,
		// One replica, whose user may not write Leases.
		"--leader-elect=false",
	}
	args = append(args, strings.Fields(os.Getenv("BENCH_MANAGER_FLAGS"))...)
	return e.startProcess(ctx, bin, args, "manager.log", probe, "the manager")
}

// startProcess runs a manager binary with its output in the run directory and waits until its
// health endpoint says ready; what names it in errors.
func (e *env) startProcess(ctx context.Context, bin string, args []string, log, health, what string) error {
	e.mgrLog = filepath.Join(e.dir, log)
	logFile, err := os.Create(e.mgrLog)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return err
	}
	e.mgr, e.mgrDone = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(e.mgrDone) }()

	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+health+"/readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-e.mgrDone:
			return fmt.Errorf("%s exited; see %s", what, e.mgrLog)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s was not ready after 2m; see %s", what, e.mgrLog)
}

func (e *env) stop() {
	if e.stopped {
		return
	}
	e.stopped = true
	if e.mgr != nil {
		_ = syscall.Kill(-e.mgr.Process.Pid, syscall.SIGTERM)
		select {
		case <-e.mgrDone:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-e.mgr.Process.Pid, syscall.SIGKILL)
			<-e.mgrDone
		}
	}
	if e.cp != nil {
		_ = e.cp.Stop()
	}
}

// resetPeak resets the manager's peak resident set (VmHWM) to its current size.
func (e *env) resetPeak() {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", e.mgr.Process.Pid), []byte("5"), 0o600)
}

// peakMiB is the manager's peak resident set since the last resetPeak.
func (e *env) peakMiB() float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.mgr.Process.Pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// requests reads the apiserver's request counters.
func (e *env) requests(ctx context.Context) controlplane.Requests {
	r, _ := controlplane.ReadRequests(ctx, e.kube.Discovery().RESTClient())
	return r
}

// cpuProfile writes a CPU profile of the manager over the next seconds to path.
func (e *env) cpuProfile(ctx context.Context, path string, seconds int) {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", e.PprofAddr, seconds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return
	}
	_ = os.WriteFile(path, data, 0o600)
}

// apiserverProfile writes a CPU profile of the kube-apiserver over the next seconds to path.
func (e *env) apiserverProfile(ctx context.Context, path string, seconds int) {
	data, err := e.kube.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(seconds)).DoRaw(ctx)
	if err != nil {
		return
	}
	_ = os.WriteFile(path, data, 0o600)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}
