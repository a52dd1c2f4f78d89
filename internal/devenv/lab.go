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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchlab"
)

// The sample objects the lab's values replace, and the links a tenant would make once the
// Switch has created its ports (SwitchPorts are the Switch's to create, so no sample can
// carry them).
const (
	sampleSecret        = "switch-example-secret"
	sampleAnsibleSwitch = "switch-sample"
)

var sampleLinks = map[string]string{
	"switchport-example": "switchportconfiguration-example",
	"switchport-access":  "switchportconfiguration-access",
}

// labPorts is how many dummy ports the lab's bridge gets (p0..p3); the sample Switch uses p0
// and p1.
const labPorts = 4

// labDir is where the lab's daemons keep their state: under the system's temporary
// directory, which the unprivileged lab user can reach (bin/ may not be), and always the
// same, so the next start stops whatever a crashed run left there.
func labDir() string { return filepath.Join(os.TempDir(), "rackwire-dev-lab") }

// startLab starts the switch lab, or says what it lacks and lets the rest come up.
func (e *Env) startLab() {
	if os.Geteuid() != 0 {
		fmt.Fprintf(e.opts.Log, "switch lab: not started: it needs root (it creates the user rackwire-lab and runs Open vSwitch "+
			"and an sshd on loopback)%s; run `sudo make dev` for it. The sample Switch stays not Ready, everything else runs.\n", missingPackages())
		return
	}
	fmt.Fprintln(e.opts.Log, "starting the switch lab (Open vSwitch behind an sshd on loopback)")
	lab, err := switchlab.StartIn(e.opts.Root, labDir(), labPorts)
	if err != nil {
		fmt.Fprintf(e.opts.Log, "switch lab: not started: %v\nThe sample Switch stays not Ready, everything else runs.\n", err)
		return
	}
	e.Lab = lab
}

// pointAtLab rewrites the sample AnsibleSwitch and its Secret to reach the lab, before they
// are applied, so the Switch's first check already logs in.
func (e *Env) pointAtLab(obj *unstructured.Unstructured) error {
	lab := e.Lab
	if lab == nil {
		return nil
	}
	switch {
	case obj.GetKind() == "Secret" && obj.GetName() == sampleSecret:
		return unstructured.SetNestedStringMap(obj.Object, map[string]string{"username": lab.User, "password": lab.Password}, "stringData")
	case obj.GetKind() == "AnsibleSwitch" && obj.GetName() == sampleAnsibleSwitch:
		unstructured.RemoveNestedField(obj.Object, "spec", "insecureIgnoreHostKey")
		for path, v := range map[string]any{"ip": lab.Host, "port": int64(lab.Port), "bridge": lab.Bridge, "hostKeys": []any{lab.HostKey}} {
			if err := unstructured.SetNestedField(obj.Object, v, "spec", path); err != nil {
				return err
			}
		}
	}
	return nil
}

// linkSamples links the sample ports to their configurations once the Switch has created
// them, as a tenant would with kubectl patch.
func (e *Env) linkSamples(ctx context.Context, ns string) error {
	if e.Lab == nil {
		return nil
	}
	for port, cfg := range sampleLinks {
		if e.opts.BMO && port == bmoDrivenPort {
			continue // the HostLink sample moves it with the host's state
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			p := &networkv1alpha1.SwitchPort{}
			if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: port}, p); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if p.Spec.Configuration != nil && p.Spec.Configuration.Name == cfg {
				return true, nil
			}
			base := p.DeepCopy()
			p.Spec.Configuration = &networkv1alpha1.ConfigurationRef{Name: cfg}
			return true, e.Client.Patch(ctx, p, client.MergeFrom(base))
		})
		if err != nil {
			return fmt.Errorf("linking SwitchPort %s to %s: %w", port, cfg, err)
		}
	}
	fmt.Fprintf(e.opts.Log, "linked the sample SwitchPorts to their configurations on the lab switch (%s:%d)\n", e.Lab.Host, e.Lab.Port)
	return nil
}

// labPackages are the Debian packages the lab and the Ansible driver need
// (hack/system-packages.sh installs them as root).
var labPackages = []string{"ansible", "python3-network-runner", "openvswitch-switch", "openssh-server", "sshpass", "python3-paramiko"}

// missingPackages names the lab's packages dpkg does not list as installed, as a clause of
// startLab's message.
func missingPackages() string {
	var missing []string
	for _, p := range labPackages {
		out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", p).Output()
		if err != nil || !strings.Contains(string(out), "install ok installed") {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return " (its packages are installed)"
	}
	return " and the packages " + strings.Join(missing, ", ") + " (hack/system-packages.sh installs them)"
}
