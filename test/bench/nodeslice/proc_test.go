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

package nodeslice

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rackwire/rackwire/internal/procstat"
)

// cpuTimes is the CPU time so far of one process and of the control plane this test
// process started.
type cpuTimes struct{ controller, apiserver, etcd time.Duration }

func cpuNow(pid int) cpuTimes {
	var c cpuTimes
	if st, ok := procstat.Read(filepath.Join("/proc", strconv.Itoa(pid), "stat")); ok {
		c.controller = st.CPU
	}
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range paths {
		st, ok := procstat.Read(p)
		if !ok || st.PPID != os.Getpid() {
			continue
		}
		switch st.Comm {
		case "kube-apiserver":
			c.apiserver += st.CPU
		case "etcd":
			c.etcd += st.CPU
		}
	}
	return c
}

func (c cpuTimes) since(b cpuTimes) cpuTimes {
	return cpuTimes{c.controller - b.controller, c.apiserver - b.apiserver, c.etcd - b.etcd}
}
