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

package switchport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
	"github.com/rackwire/rackwire/internal/switchdriver/ansible"
)

// --switch-max-playbooks bounds the manager's ansible-playbook processes, and a run waits
// for one within its own limit. A healthy switch whose run waited out its limit because
// other (hung) switches held every process never reached the switch; that wait ended as
// ErrTimeout, which the breaker took for the switch's own failure, and since the wait lasted
// one run timeout, the breaker's time bound opened the healthy switch's circuit at once. A
// run that never started must neither open nor close a switch's circuit.
func TestBreakerIgnoresARunThatWaitedForAPlaybookProcess(t *testing.T) {
	marks := t.TempDir()
	hung := filepath.Join(t.TempDir(), "ansible-playbook")
	// The hung switch's run holds the manager's only process until the test ends.
	if err := os.WriteFile(hung, []byte(fmt.Sprintf("#!/bin/sh\ntouch %s/started\nexec sleep 600\n", marks)), 0o755); err != nil {
		t.Fatal(err)
	}
	factory := ansible.Factory(ansible.Config{WorkDir: t.TempDir(), Playbook: hung, MaxProcesses: 1})
	driver := func(name string) switchdriver.Driver {
		t.Helper()
		d, err := factory(&networkv1alpha1.AnsibleSwitch{
			ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name},
			Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.1", Port: 22, Bridge: "br0",
				InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: name}},
		}, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name},
			Data:       map[string][]byte{ansible.KeyUsername: []byte("u"), ansible.KeyPassword: []byte("p")},
		})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	change := switchdriver.Change{Port: "p0", Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "7"}}

	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan struct{})
	go func() {
		defer close(held)
		_ = driver("hung").Apply(ctx, []switchdriver.Change{change})
	}()
	t.Cleanup(func() { cancel(); <-held })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(marks, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hung switch's run never started")
		}
	}

	bt := NewBatcher(10*time.Millisecond, time.Second)
	bt.BreakBase, bt.BreakMax = time.Hour, time.Hour
	healthy := types.NamespacedName{Namespace: "infra", Name: "healthy"}
	err := bt.Apply(context.Background(), healthy, driver("healthy"), change)
	if !errors.Is(err, switchdriver.ErrTimeout) {
		t.Fatalf("the healthy switch's run ended with %v, want a timeout waiting for a process", err)
	}
	if failed, until := bt.Breaker(healthy); until.After(time.Now()) || failed != 0 {
		t.Errorf("a switch whose run never started (it waited for a playbook process) has %d failed runs and its circuit open until %v; want it closed", failed, until)
	}
}
