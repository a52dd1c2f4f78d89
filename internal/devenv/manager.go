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

package devenv

import (
	"context"
	"fmt"
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
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// managerUser is the identity the manager runs as. It holds only the generated
// manager-role, so a missing RBAC marker fails in `make dev` as it would in a cluster.
const managerUser = "rackwire-manager"

// child is a process devenv started and stops: the manager or kube-controller-manager.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startChild starts cmd in its own process group (so Stop, or a later run, can take down
// anything it spawns), with the kernel stopping it if devenv dies first, and records it.
func (e *Env) startChild(name string, cmd *exec.Cmd) (*child, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s %s: %w", name, cmd.Path, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, e.procs.record(cmd.Process.Pid)
}

func (e *Env) startManager(ctx context.Context) error {
	if _, err := applyFile(ctx, e.Client, filepath.Join(e.opts.Root, "config/rbac/role.yaml"), ""); err != nil {
		return fmt.Errorf("installing the manager's ClusterRole: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "manager-role"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: managerUser}},
	}
	binding.Name = "manager-rolebinding"
	if err := e.Client.Create(ctx, binding); err != nil {
		return fmt.Errorf("binding the manager's ClusterRole: %w", err)
	}
	// Switch credentials: a cluster grants them per namespace (config/switch-secrets); here
	// Switches live in any namespace a test makes, so get/update/patch everywhere, still
	// without list or watch, and the manager is told so (--switch-secret-namespaces=*).
	secrets := &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "update", "patch"}}}}
	secrets.Name = "dev-switch-secrets"
	if err := e.Client.Create(ctx, secrets); err != nil {
		return fmt.Errorf("granting the manager switch credentials: %w", err)
	}
	secretsBinding := &rbacv1.ClusterRoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: secrets.Name},
		Subjects: binding.Subjects,
	}
	secretsBinding.Name = secrets.Name
	if err := e.Client.Create(ctx, secretsBinding); err != nil {
		return fmt.Errorf("granting the manager switch credentials: %w", err)
	}
	kubeconfig := filepath.Join(e.opts.Dir, "manager.kubeconfig")
	if err := e.WriteKubeconfig(kubeconfig, envtest.User{Name: managerUser}); err != nil {
		return err
	}
	// A fresh log per environment; a restart (StartManager) appends to it.
	if err := os.WriteFile(filepath.Join(e.opts.Dir, "manager.log"), nil, 0o644); err != nil {
		return err
	}
	return e.runManager(ctx, kubeconfig)
}

// StopManager stops the manager, as an outage would; StartManager starts it again. For tests
// of what works while rackwire is down (Done reports the stop: not for `make dev`).
func (e *Env) StopManager() error { return e.manager.stop(10 * time.Second) }

// StartManager starts the manager again after StopManager, with the same flags, and waits
// until it is ready.
func (e *Env) StartManager(ctx context.Context) error {
	return e.runManager(ctx, filepath.Join(e.opts.Dir, "manager.kubeconfig"))
}

func (e *Env) runManager(ctx context.Context, kubeconfig string) error {
	probe, err := freePort()
	if err != nil {
		return err
	}
	metricsAddr, err := freePort()
	if err != nil {
		return err
	}
	// Plain HTTP on loopback: in a cluster the endpoint is HTTPS behind the apiserver's
	// authentication and authorization, which a local curl or Prometheus cannot pass.
	e.MetricsURL = "http://" + metricsAddr + "/metrics"
	hooks := e.cp.WebhookInstallOptions
	e.WebhookAddr = net.JoinHostPort(hooks.LocalServingHost, strconv.Itoa(hooks.LocalServingPort))
	e.WebhookCA = hooks.LocalServingCAData
	e.ManagerLog = filepath.Join(e.opts.Dir, "manager.log")
	logFile, err := os.OpenFile(e.ManagerLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }() // the child keeps its own descriptor

	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--metrics-bind-address=" + metricsAddr,
		"--metrics-secure=false",
		"--health-probe-bind-address=" + probe,
		"--webhook-host=" + hooks.LocalServingHost,
		"--webhook-port=" + strconv.Itoa(hooks.LocalServingPort),
		"--webhook-cert-dir=" + hooks.LocalServingCertDir,
		"--zap-devel",
		// One manager, and its user may not write Leases.
		"--leader-elect=false",
		"--switch-secret-namespaces=*",
	}, e.opts.ManagerArgs...)
	cmd := exec.Command(e.opts.Manager, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	fmt.Fprintf(e.opts.Log, "starting the manager (log: %s)\n", e.ManagerLog)
	if e.manager, err = e.startChild("the manager", cmd); err != nil {
		return err
	}
	return e.manager.waitReady(ctx, http.DefaultClient, "http://"+probe+"/readyz", e.ManagerLog, 2*time.Minute)
}

func (m *child) waitReady(ctx context.Context, hc *http.Client, url, logPath string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := hc.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-m.done:
			return fmt.Errorf("%s exited before it was ready (%v); last lines of %s:\n%s", m.name, m.err, logPath, tail(logPath, 20))
		case <-ctx.Done():
			return fmt.Errorf("%s was not ready after %s; last lines of %s:\n%s", m.name, timeout, logPath, tail(logPath, 20))
		case <-tick.C:
		}
	}
}

func (m *child) stop(timeout time.Duration) error {
	select {
	case <-m.done:
		return nil
	default:
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-m.done:
		return nil
	case <-time.After(timeout):
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.done
		return fmt.Errorf("%s did not stop within %s and was killed", m.name, timeout)
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
