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
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// runPlugin runs the built binary as a runtime does: the verb and attachment in CNI_*
// variables, the configuration on stdin.
func runPlugin(verb string, conf []byte, container, node, args string) ([]byte, error) {
	cmd := exec.Command(plugin)
	cmd.Env = append(os.Environ(), "CNI_COMMAND="+verb, "CNI_CONTAINERID="+container, "CNI_NETNS=/var/run/netns/"+container,
		"CNI_IFNAME=net1", "CNI_PATH=/nonexistent", "CNI_ARGS="+args, "NODENAME="+node)
	cmd.Stdin = bytes.NewReader(conf)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s on %s: %v: %s %s", verb, container, node, err, strings.TrimSpace(out.String()), errOut.String())
	}
	return out.Bytes(), nil
}
