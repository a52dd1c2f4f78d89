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

// Command devenv is `make dev`: a local control plane on loopback with every CRD and webhook
// configuration, the manager running against it, and the samples applied. It runs until
// Ctrl-C and then stops everything it started.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/devenv"
)

func main() {
	dir := flag.String("dir", "bin/dev", "Directory for the kubeconfig, the manager log and the control plane's state.")
	manager := flag.String("manager", "bin/manager", "The manager binary to run.")
	samples := flag.Bool("samples", true, "Apply config/samples once the manager is ready.")
	lab := flag.Bool("switch-lab", true, "Start the switch lab (root only) and point the sample AnsibleSwitch at it.")
	bmo := flag.Bool("bmo", false, "Run the Bare Metal Operator in test mode with a BareMetalHost wired to the lab switch (config/samples/bmo).")
	flag.Parse()
	// Whatever controller-runtime itself logs (envtest, the client) goes to stderr as lines:
	// left unset, its logger answers the first message with a stack trace.
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr)))

	if err := run(*dir, *manager, *samples, *lab, *bmo); err != nil {
		fmt.Fprintln(os.Stderr, "devenv:", err)
		os.Exit(1)
	}
}

func run(dir, manager string, samples, lab, bmo bool) error {
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if manager, err = filepath.Abs(manager); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	env, err := devenv.Start(ctx, devenv.Options{Root: root, Dir: dir, Manager: manager, Samples: samples, SwitchLab: lab, BMO: bmo, Log: os.Stdout})
	if err != nil {
		return err
	}
	printTryThis(env.Kubeconfig, env.ManagerLog, env.ControllerManagerLog, env.MetricsURL)

	var runErr error
	select {
	case <-ctx.Done():
		fmt.Println("\nstopping")
	case <-env.Done():
		runErr = fmt.Errorf("%v (logs: %s, %s)", env.Err(), env.ManagerLog, env.ControllerManagerLog)
	}
	if err := env.Stop(); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

func printTryThis(kubeconfig, managerLog, kcmLog, metricsURL string) {
	kubectl := "kubectl"
	if _, err := exec.LookPath(kubectl); err != nil {
		// hack/envtest-bins.sh builds one next to kube-apiserver.
		kubectl = filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	}
	k := kubectl + " --kubeconfig " + kubeconfig
	fmt.Printf(`
rackwire is up. The manager logs to %s, kube-controller-manager (garbage collector,
namespace controller) to %s.

Try, from another shell:

  export KUBECONFIG=%s
  %s get ippools,ipclaims,ipaddresses.ipam.metal3.io,switches,switchports,ipaddressclaims -A
  %s get switches,switchports -A
  %s get nodeslicepools -n kube-system
  %s get ipamclaims -A -o custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,NETWORK:.spec.network,IPS:.status.ips
  %s get crds
  %s explain switchportconfiguration.spec
  %s explain ippool.spec.pools
  %s apply -f config/samples/
  curl -s %s | grep ^rackwire_

Ctrl-C stops everything.
`, managerLog, kcmLog, kubeconfig, k, k, k, k, k, k, k, k, metricsURL)
}
