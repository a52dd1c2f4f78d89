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

package main

import (
	"os"
	"slices"
	"testing"

	"github.com/rackwire/rackwire/internal/controller/switches"
)

// The switch area's bounds are the infra team's to set: the number of ansible-playbook
// processes against the pod's memory limit, and the namespaces whose Secrets the manager reads
// (its own when none is given; never every namespace by omission).
func TestSwitchFlags(t *testing.T) {
	args := os.Args
	t.Cleanup(func() { os.Args = args })
	os.Args = []string{"manager", "--switch-max-playbooks=3", "--switch-secret-namespaces=leaf-infra, spine-infra"}
	o := parseFlags()
	if switches.Ansible.MaxProcesses != 3 {
		t.Errorf("--switch-max-playbooks=3 set %d processes", switches.Ansible.MaxProcesses)
	}
	if got := secretNamespaces(o.secretNamespaces); !slices.Equal(got, []string{"leaf-infra", "spine-infra"}) {
		t.Errorf("--switch-secret-namespaces: %v", got)
	}
	t.Setenv("POD_NAMESPACE", "rackwire-system")
	if got := secretNamespaces(""); !slices.Equal(got, []string{"rackwire-system"}) {
		t.Errorf("no --switch-secret-namespaces in a pod: %v; want the manager's namespace", got)
	}
	t.Setenv("POD_NAMESPACE", "")
	if _, err := os.Stat(serviceAccountNamespace); err != nil {
		if got := secretNamespaces(""); !slices.Equal(got, []string{noNamespace}) {
			t.Errorf("no --switch-secret-namespaces outside a pod gave %v; want no namespace granted", got)
		}
	}
}
