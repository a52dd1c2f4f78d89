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

package switchlab

import (
	"encoding/json"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// ParkingVLAN is where the lab's Switches park clean ports.
const ParkingVLAN = 4000

// Objects are what the infra team creates for a switch of the lab: the credentials Secret,
// the AnsibleSwitch (pinning the lab's host key) and the Switch with one SwitchPort per
// lab port, named <name>-<port>, parking clean ports on ParkingVLAN. host is one of
// l.Hosts: each Switch needs its own. sshPort and password may differ from the lab's own to
// stand for a hung switch or a wrong password.
func (l *Lab) Objects(ns, name, host string, sshPort int32, password string, ports ...string) []client.Object {
	infos := map[string]networkv1alpha1.PortInfo{}
	for _, p := range ports {
		infos[name+"-"+p] = networkv1alpha1.PortInfo{Name: p}
	}
	meta := metav1.ObjectMeta{Namespace: ns, Name: name}
	parking := networkv1alpha1.VLANID(ParkingVLAN)
	return []client.Object{
		&corev1.Secret{ObjectMeta: meta, StringData: map[string]string{"username": l.User, "password": password}},
		&networkv1alpha1.AnsibleSwitch{ObjectMeta: meta, Spec: networkv1alpha1.AnsibleSwitchSpec{
			OS: "openvswitch", IP: host, Port: sshPort, Bridge: l.Bridge,
			HostKeys: []string{l.HostKey}, CredentialsSecret: networkv1alpha1.SecretRef{Name: name},
		}},
		&networkv1alpha1.Switch{ObjectMeta: meta, Spec: networkv1alpha1.SwitchSpec{
			Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: name}, Ports: infos,
			Clean: networkv1alpha1.CleanPolicy{ParkingVLAN: &parking},
		}},
	}
}

// Run is one playbook run of the manager, as its log line tells it.
type Run struct {
	Playbook string  `json:"playbook"`
	Ports    int     `json:"ports"`
	Tasks    int     `json:"tasks"`
	Seconds  float64 `json:"seconds"`
}

// ApplyRuns lists the apply runs on a switch ("ns/name") in a manager log, in order.
func ApplyRuns(managerLog, sw string) ([]Run, error) {
	b, err := os.ReadFile(managerLog)
	if err != nil {
		return nil, err
	}
	var out []Run
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, "playbook run") || !strings.Contains(l, `"switch": "`+sw+`"`) {
			continue
		}
		i := strings.IndexByte(l, '{')
		if i < 0 {
			continue
		}
		var r Run
		if json.Unmarshal([]byte(l[i:]), &r) == nil && strings.HasPrefix(r.Playbook, "apply") {
			out = append(out, r)
		}
	}
	return out, nil
}
