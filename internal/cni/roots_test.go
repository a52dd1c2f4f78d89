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

package cni_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestNADPathsOutsideTheNode: a NAD naming a state_dir, log_file, kubeconfig or
// configuration_path outside the DaemonSet's directories fails ADD naming the key, and
// nothing is created there (log_file gets no line of that failure either).
func TestNADPathsOutsideTheNode(t *testing.T) {
	const stateOut, logOut = "/etc/rackwire-nad-state", "/root/rackwire-nad.log"
	for _, p := range []string{stateOut, logOut} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s exists before the test: %v", p, err)
		}
	}
	good := fmt.Sprintf(`"kubernetes":{"kubeconfig":%q},"state_dir":%q`, kubeconfig, stateDir)
	for _, tc := range []struct{ ipam, key string }{
		{fmt.Sprintf(`"kubernetes":{"kubeconfig":%q},"state_dir":%q`, kubeconfig, stateOut), "ipam.state_dir"},
		{good + fmt.Sprintf(`,"log_file":%q`, logOut), "ipam.log_file"},
		{fmt.Sprintf(`"kubernetes":{"kubeconfig":"/etc/shadow"},"state_dir":%q`, stateDir), "ipam.kubernetes.kubeconfig"},
		{good + `,"configuration_path":"/root/rackwire-nad.conf"`, "ipam.configuration_path"},
	} {
		conf := fmt.Appendf(nil, `{"cniVersion":"1.1.0","name":"confined","type":"bridge","ipam":{"type":"rackwire","range":"10.99.0.0/24",%s}}`, tc.ipam)
		_, err := runPlugin("ADD", conf, "c-confined", "node-p", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=confined")
		if err == nil || !strings.Contains(err.Error(), tc.key+": ") || !strings.Contains(err.Error(), "outside the directories") {
			t.Errorf("ADD with %s outside: %v", tc.key, err)
		}
	}
	for _, p := range []string{stateOut, logOut} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was created: %v", p, err)
			_ = os.RemoveAll(p)
		}
	}
}
