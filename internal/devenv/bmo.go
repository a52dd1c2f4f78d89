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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// bmoSamples are applied with Options.BMO: a BareMetalHost for the HostLink sample.
const bmoSamples = "config/samples/bmo"

// bmoDrivenPort is the sample SwitchPort the HostLink sample drives once BMO runs: devenv
// leaves its link to the host's state.
const bmoDrivenPort = "switchport-example"

type bmoProcess struct{ cmd *exec.Cmd }

// startBMO runs the Bare Metal Operator (hack/bmo-bin.sh builds it once) in its test mode,
// watching namespace ns, as the admin of the control plane.
func (e *Env) startBMO(ns string) error {
	out, err := exec.Command(filepath.Join(e.opts.Root, "hack", "bmo-bin.sh")).Output()
	if err != nil {
		return fmt.Errorf("building BMO (hack/bmo-bin.sh): %w", err)
	}
	bin := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	logPath := filepath.Join(e.opts.Dir, "bmo.log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // the child keeps its own descriptor
	cmd := exec.Command(bin, "-test-mode", "-webhook-port=0", "-metrics-addr=0", "-health-addr=0", "-namespace="+ns)
	cmd.Env = []string{"KUBECONFIG=" + e.Kubeconfig, "PATH=" + os.Getenv("PATH"), "HOME=" + e.opts.Dir}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	fmt.Fprintf(e.opts.Log, "starting the Bare Metal Operator in test mode (log: %s)\n", logPath)
	if err := cmd.Start(); err != nil {
		return err
	}
	e.bmo = &bmoProcess{cmd: cmd}
	return e.procs.record(cmd.Process.Pid)
}

func (b *bmoProcess) stop() error {
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- b.cmd.Wait() }()
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("BMO did not stop within 10s and was killed")
	}
}
