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

package cni_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rackwire/rackwire/internal/cni"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/scheme"
)

// The suite's control plane: the real kube-apiserver with every CRD, no webhooks (the
// plugin's writes are not admitted by rackwire's webhooks), and a kubeconfig for the plugin.
var (
	k8s        client.Client
	kubeconfig string
	stateDir   string
	// plugin is the built binary, for what runs as separate processes (concurrent ADDs).
	plugin string
	// suiteDir is the only directory the suite's configurations may name.
	suiteDir string
)

// tempDir is a directory for one test under suiteDir.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp(suiteDir, "t")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const poolNS = "kube-system"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		panic(err)
	}
	env, err := controlplane.New(root)
	if err != nil {
		panic(err)
	}
	env.WebhookInstallOptions.Paths = nil
	cfg, err := env.Start()
	if err != nil {
		panic(err)
	}
	defer func() { _ = env.Stop() }()
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		panic(err)
	}
	user, err := env.AddUser(envtest.User{Name: "cni-node", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		panic(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "rackwire-cni-test")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfig = filepath.Join(dir, "kubeconfig")
	stateDir = filepath.Join(dir, "state")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		panic(err)
	}
	plugin = filepath.Join(dir, "rackwire")
	if out, err := exec.Command("go", "build", "-o", plugin, "github.com/rackwire/rackwire/cmd/cni").CombinedOutput(); err != nil {
		panic(string(out))
	}
	// The suite's directory stands for the node's: the verbs run here and the binary accept
	// paths under it only, as the install allows the DaemonSet's directories.
	suiteDir = dir
	cni.AllowedRoots = cni.Roots{State: []string{stateDir}, Log: []string{dir}, Config: []string{dir}}
	if err := cni.WriteRoots(plugin, cni.AllowedRoots); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}); err != nil {
		panic(err)
	}
	return m.Run()
}
