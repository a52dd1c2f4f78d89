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
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// controllers are the kube-controller-manager loops devenv runs: the garbage collector, since
// rackwire relies on owner references (a deleted VM's IPAMClaims, a deleted pool's
// addresses), and the namespace controller, so that a deleted namespace empties and goes as in
// a cluster. Nothing else: there are no kubelets, and the node lifecycle, service account and
// token controllers would only add load (and keys) that no test needs.
var controllers = []string{"garbage-collector-controller", "namespace-controller"}

// startControllerManager runs kube-controller-manager against the control plane as a
// system:masters user (one identity for every loop: --use-service-account-credentials=false
// needs no service account keys) and waits for its /healthz.
func (e *Env) startControllerManager(ctx context.Context) error {
	bin := e.opts.ControllerManager
	if bin == "" {
		bin = filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kube-controller-manager")
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("kube-controller-manager (built by hack/envtest-bins.sh next to kube-apiserver): %w", err)
	}
	kubeconfig := filepath.Join(e.opts.Dir, "controller-manager.kubeconfig")
	if err := e.WriteKubeconfig(kubeconfig, envtest.User{Name: "system:kube-controller-manager", Groups: []string{"system:masters"}}); err != nil {
		return err
	}
	addr, err := freePort()
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(addr)
	certDir := filepath.Join(e.opts.Dir, "state", "controller-manager")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	e.ControllerManagerLog = filepath.Join(e.opts.Dir, "controller-manager.log")
	logFile, err := os.Create(e.ControllerManagerLog)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }() // the child keeps its own descriptor

	cmd := exec.Command(bin,
		"--kubeconfig="+kubeconfig,
		"--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		// Its serving port only answers /healthz here; a self-signed certificate on loopback.
		"--bind-address="+host,
		"--secure-port="+port,
		"--cert-dir="+certDir,
		"--v=2",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	fmt.Fprintf(e.opts.Log, "starting kube-controller-manager: %s (log: %s)\n", strings.Join(controllers, ", "), e.ControllerManagerLog)
	if e.kcm, err = e.startChild("kube-controller-manager", cmd); err != nil {
		return err
	}
	// /healthz is always allowed without credentials; the certificate is the one it just
	// generated for itself on loopback, which nothing could have signed.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe of our own child
	}}
	return e.kcm.waitReady(ctx, hc, "https://"+addr+"/healthz", e.ControllerManagerLog, 2*time.Minute)
}
