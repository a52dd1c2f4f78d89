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

package ansible

import (
	"context"
	"os/exec"
	"syscall"
	"time"

	ansibleexec "github.com/apenella/go-ansible/v2/pkg/execute/exec"
)

// groupExec starts ansible-playbook as the leader of its own process group and, when the
// run's context ends, kills the whole group: ansible's forked workers, ssh and sshpass
// would otherwise outlive a cancelled run and keep its output pipes open.
//
// It also gives the run exactly env and nothing of the manager's environment. go-ansible
// appends os.Environ() to the variables of a plain *exec.Cmd; the wrapper it returns is not
// one, so go-ansible leaves its environment, directory and stdin alone.
type groupExec struct {
	env []string
	dir string
	// cmd is the last command started, whose exit status explains a run that died early
	// (go-ansible's own errors do not unwrap to it).
	cmd *exec.Cmd
}

func (g *groupExec) Command(name string, arg ...string) ansibleexec.Cmder {
	return ansibleexec.NewCmd(g.command(context.Background(), name, arg...))
}

func (g *groupExec) CommandContext(ctx context.Context, name string, arg ...string) ansibleexec.Cmder {
	return ansibleexec.NewCmd(g.command(ctx, name, arg...))
}

func (g *groupExec) command(ctx context.Context, name string, arg ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, arg...)
	g.cmd = cmd
	cmd.Env = g.env
	cmd.Dir = g.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	// After the kill, the pipes of a stray grandchild that left the group must not hold
	// Wait forever.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// killGroup kills the process group led by the command; it is harmless when the group is
// already gone.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}
