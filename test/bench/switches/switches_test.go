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

// Package switches benchmarks the batching of the switch operator on a real switch: the
// built manager binary under `make dev`'s control plane drives the lab's Open vSwitch over
// SSH. The figures are how much longer 24 and 96 ports take than one to reach Active, how many
// playbook runs they took and how many tasks a run cost; all come from one run on one machine.
package switches

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/devenv"
	"github.com/rackwire/rackwire/internal/switchlab"
)

const ns = "default"

func BenchmarkSwitchPortsToActive(b *testing.B) {
	ctx := context.Background()
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		b.Fatal(err)
	}
	manager := filepath.Join(b.TempDir(), "manager")
	if out, err := exec.Command("go", "build", "-C", root, "-o", manager, "./cmd/manager").CombinedOutput(); err != nil {
		b.Fatalf("building the manager: %v\n%s", err, out)
	}
	lab, err := switchlab.Start(root, 128)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = lab.Stop() }()
	env, err := devenv.Start(ctx, devenv.Options{
		Root: root, Dir: b.TempDir(), Manager: manager, Log: os.Stderr,
		// Drift reads would share runs with the measured changes.
		ManagerArgs: []string{"--switch-drift-interval=1h"},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	k8s := env.Client
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
		Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "1-200"},
	}))
	must(k8s.Create(ctx, &networkv1alpha1.SwitchPortConfiguration{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "access-60"},
		Spec:       networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptr.To(networkv1alpha1.VLANID(60))},
	}))

	type result struct {
		ports   int
		seconds float64
		runs    int
		tasks   int // the most tasks one apply run took
	}
	hosts := lab.Hosts
	measure := func(name string, ports []string) result {
		// One device per Switch: each measured Switch takes the next of the lab's addresses.
		host := hosts[0]
		hosts = hosts[1:]
		for _, o := range lab.Objects(ns, name, host, lab.Port, lab.Password, ports...) {
			must(k8s.Create(ctx, o))
		}
		names := make([]string, len(ports))
		for i, p := range ports {
			names[i] = name + "-" + p
		}
		// The ports exist and are Idle (clean, verified) before the clock starts.
		must(waitStates(ctx, k8s, names, networkv1alpha1.StateIdle, 10*time.Minute))
		before, err := switchlab.ApplyRuns(env.ManagerLog, ns+"/"+name)
		must(err)
		start := time.Now()
		// A burst, as a MachineDeployment scaling up links its hosts' ports: all at once.
		var g errgroup.Group
		for _, n := range names {
			g.Go(func() error { return link(ctx, k8s, n, "access-60") })
		}
		must(g.Wait())
		must(waitStates(ctx, k8s, names, networkv1alpha1.StateActive, 10*time.Minute))
		took := time.Since(start)
		after, err := switchlab.ApplyRuns(env.ManagerLog, ns+"/"+name)
		must(err)
		for _, p := range ports {
			if tag, err := lab.Get("Port", p, "tag"); err != nil || tag != "60" {
				b.Fatalf("port %s is Active but holds tag %q (%v)", p, tag, err)
			}
		}
		r := result{ports: len(ports), seconds: took.Seconds(), runs: len(after) - len(before)}
		for _, run := range after[len(before):] {
			r.tasks = max(r.tasks, run.Tasks)
		}
		return r
	}

	b.ResetTimer()
	var one, many, most result
	span := func(from, to int) []string {
		var ports []string
		for i := from; i < to; i++ {
			ports = append(ports, fmt.Sprintf("p%d", i))
		}
		return ports
	}
	for b.Loop() {
		one = measure("one", []string{"p0"})
		many = measure("many", span(8, 32))
		most = measure("most", span(32, 128))
	}
	b.StopTimer()
	fmt.Printf("\nswitch ports to Active (manager binary, Ansible over SSH to Open vSwitch on loopback)\n")
	fmt.Printf("%-6s %9s %13s %15s\n", "ports", "seconds", "apply runs", "tasks per run")
	for _, r := range []result{one, many, most} {
		fmt.Printf("%-6d %9.1f %13d %15d\n", r.ports, r.seconds, r.runs, r.tasks)
	}
	fmt.Printf("24 ports / 1 port time ratio: %.2f (goal 1.5); 96 / 1: %.2f (goal 2.5)\n\n", many.seconds/one.seconds, most.seconds/one.seconds)
	b.ReportMetric(one.seconds, "s/1-port")
	b.ReportMetric(many.seconds, "s/24-ports")
	b.ReportMetric(most.seconds, "s/96-ports")
	b.ReportMetric(many.seconds/one.seconds, "ratio-24/1")
	b.ReportMetric(most.seconds/one.seconds, "ratio-96/1")
	b.ReportMetric(float64(most.tasks), "tasks/run-96")
}

func link(ctx context.Context, c client.Client, port, cfg string) error {
	p := &networkv1alpha1.SwitchPort{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: port}, p); err != nil {
		return err
	}
	base := p.DeepCopy()
	p.Spec.Configuration = &networkv1alpha1.ConfigurationRef{Name: cfg}
	return c.Patch(ctx, p, client.MergeFrom(base))
}

func waitStates(ctx context.Context, c client.Client, ports []string, want networkv1alpha1.SwitchPortState, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		pending := ""
		for _, n := range ports {
			p := &networkv1alpha1.SwitchPort{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, p); err != nil || p.Status.State != want {
				pending = n
				break
			}
		}
		if pending == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("port %s is not %s after %v", pending, want, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
