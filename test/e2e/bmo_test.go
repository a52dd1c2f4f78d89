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

package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// bmo is the real Bare Metal Operator (built by hack/bmo-bin.sh) in its test mode, where hosts
// walk BMO's own state machine with a fixture provisioner instead of Ironic.
type bmo struct {
	cmd *exec.Cmd
	Log string
}

func startBMO(root, kubeconfig, namespace, dir string) (*bmo, error) {
	out, err := exec.Command(filepath.Join(root, "hack", "bmo-bin.sh")).Output()
	if err != nil {
		return nil, err
	}
	bin := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	log := filepath.Join(dir, "bmo.log")
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-test-mode", "-webhook-port=0", "-metrics-addr=0", "-health-addr=0", "-namespace="+namespace)
	cmd.Env = []string{"KUBECONFIG=" + kubeconfig, "PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &bmo{cmd: cmd, Log: log}, nil
}

func (b *bmo) Stop() {
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// tail is the end of BMO's log, for a failed spec's report.
func (b *bmo) tail(n int) string {
	f, err := os.Open(b.Log)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = f.Close() }()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
