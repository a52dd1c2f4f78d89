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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rackwire/rackwire/internal/scheme"
)

// The flags Metal3's ip-address-manager is run with: its client limits raised from 20/30 to
// the harness's own 1000/2000, and 16 concurrent pool reconciles (it reconciles per pool, so
// one pool takes one worker at a time whatever the number).
var peerFlags = []string{"--kube-api-qps=1000", "--kube-api-burst=2000", "--ippool-concurrency=16"}

// startPeer starts a control plane of its own, with ip-address-manager's CRDs (and the
// Cluster API Cluster and IPAM CRDs it watches) as its module ships them and no webhook
// configuration, and ip-address-manager's manager (built by hack/ipam-manager-bin.sh)
// against it as an admin. It cannot share rackwire's apiserver: both serve the same
// ipam.metal3.io kinds, whose CRDs and webhooks there are rackwire's.
func startPeer(ctx context.Context, root, dir string) (*env, string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(root, "hack/ipam-manager-bin.sh")).Output()
	if err != nil {
		return nil, "", fmt.Errorf("building ip-address-manager (hack/ipam-manager-bin.sh): %w", err)
	}
	paths := strings.Fields(string(out))
	if len(paths) != 2 {
		return nil, "", fmt.Errorf("hack/ipam-manager-bin.sh printed %q, want the binary and the CRD directory", out)
	}
	bin, crds := paths[0], paths[1]
	e := &env{root: root, dir: dir, peer: true}
	e.cp = &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
	e.cp.WebhookInstallOptions.LocalServingHost = "127.0.0.1"
	if e.cfg, err = e.cp.Start(); err != nil {
		return nil, "", fmt.Errorf("starting the peer's control plane: %w", err)
	}
	e.cfg.QPS, e.cfg.Burst = 1000, 2000
	if e.c, err = client.NewWithWatch(e.cfg, client.Options{Scheme: scheme.New()}); err != nil {
		e.stop()
		return nil, "", err
	}
	if e.kube, err = kubernetes.NewForConfig(e.cfg); err != nil {
		e.stop()
		return nil, "", err
	}
	if err := e.startPeerManager(ctx, bin); err != nil {
		e.stop()
		return nil, "", err
	}
	return e, bin, nil
}

func (e *env) startPeerManager(ctx context.Context, bin string) error {
	user, err := e.cp.AddUser(envtest.User{Name: "ipam-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(e.dir, "ipam-manager.kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}
	health, err := freePort()
	if err != nil {
		return err
	}
	webhook, err := freePort()
	if err != nil {
		return err
	}
	_, port, _ := strings.Cut(webhook, ":")
	if _, err := strconv.Atoi(port); err != nil {
		return err
	}
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--health-addr=" + health,
		"--diagnostics-address=127.0.0.1:0", "--insecure-diagnostics",
		// Its webhook server must start for it to be ready; no configuration points at it.
		"--webhook-port=" + port,
		"--webhook-cert-dir=" + e.cp.WebhookInstallOptions.LocalServingCertDir,
		"--leader-elect=false",
	}, peerFlags...)
	return e.startProcess(ctx, bin, args, "ipam-manager.log", health, "ip-address-manager")
}

// runPeer measures ip-address-manager on the Metal3 IPv4 workload at n claims.
func runPeer(ctx context.Context, root, dir string, n int) (result, string) {
	e, bin, err := startPeer(ctx, root, dir)
	if err != nil {
		return result{name: "ip-address-manager: metal3 IPv4 /16", n: n, err: err}, ""
	}
	defer e.stop()
	r := runWorkload(ctx, e, workload{kind: kindMetal3, family: "v4", n: n, label: "ip-address-manager: metal3 IPv4 /16"})
	return r, bin
}
