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
	"fmt"

	corev1 "k8s.io/api/core/v1"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/netcli"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// target is a switch and its login, taken from the AnsibleSwitch and its Secret.
type target struct {
	name       string
	os, host   string
	port       int32
	bridge     string
	user       string
	password   string
	enable     string
	privateKey []byte
	hostKeys   []string
	insecure   bool
}

// Secret keys of the credentials.
const (
	KeyUsername   = "username"
	KeyPassword   = "password"
	KeyPrivateKey = "ssh-privatekey"
	// KeyEnableSecret is the secret of the privileged (enable) mode, for the OSes that have
	// one (netcli.Dialect.Enable); with it the run enters that mode before configuring.
	KeyEnableSecret = "enableSecret"
)

func targetOf(a *networkv1alpha1.AnsibleSwitch, s *corev1.Secret) (target, error) {
	t := target{
		name: a.Namespace + "/" + a.Name,
		os:   a.Spec.OS, host: a.Spec.IP, port: a.Spec.Port, bridge: a.Spec.Bridge,
		user:     string(s.Data[KeyUsername]),
		password: string(s.Data[KeyPassword]), privateKey: s.Data[KeyPrivateKey], enable: string(s.Data[KeyEnableSecret]),
		hostKeys: a.Spec.HostKeys, insecure: a.Spec.InsecureIgnoreHostKey,
	}
	if t.port == 0 {
		t.port = 22
	}
	src := fmt.Sprintf("credentials Secret %s/%s", s.Namespace, s.Name)
	switch {
	case t.user == "":
		return t, fmt.Errorf("%w: %s has no %q key", switchdriver.ErrCredentials, src, KeyUsername)
	case t.password == "" && len(t.privateKey) == 0:
		return t, fmt.Errorf("%w: %s has neither %q nor %q", switchdriver.ErrCredentials, src, KeyPassword, KeyPrivateKey)
	case t.enable != "" && !hasEnable(t.os):
		return t, fmt.Errorf("%w: %s has %q, but os %s has no enable mode", switchdriver.ErrCredentials, src, KeyEnableSecret, t.os)
	case len(t.hostKeys) == 0 && !t.insecure:
		return t, fmt.Errorf("AnsibleSwitch %s sets neither spec.hostKeys nor spec.insecureIgnoreHostKey", t.name)
	}
	return t, nil
}

func hasEnable(os string) bool {
	d, ok := netcli.Lookup(os)
	return ok && d.Enable
}

// connection is the Ansible connection plugin of the OS: Linux-based switches take
// commands over plain SSH, the others through a network CLI session.
func (t target) connection() string {
	switch t.os {
	case "openvswitch", "cumulus":
		return "ssh"
	default:
		return "ansible.netcommon.network_cli"
	}
}

// knownHostsPattern is how known_hosts names the switch.
func (t target) knownHostsPattern() string {
	if t.port == 22 {
		return t.host
	}
	return fmt.Sprintf("[%s]:%d", t.host, t.port)
}
