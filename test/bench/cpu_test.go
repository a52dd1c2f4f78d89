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

package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rackwire/rackwire/internal/procstat"
)

// cpu is the CPU time used so far by each process of the run and by the whole machine:
// on a shared two-core machine, where the time goes says more than a rate alone, and the
// machine's total shows how much of it went to processes that are not ours.
type cpu struct {
	apiserver, etcd, manager, harness time.Duration
	machineBusy, machineTotal         time.Duration
}

// cpuNow reads the CPU times of the control plane (the test process's children), the
// manager and the harness itself.
func (e *env) cpuNow() cpu {
	var c cpu
	if e.mgr != nil {
		c.manager, _ = procCPU(e.mgr.Process.Pid)
	}
	c.harness, _ = procCPU(os.Getpid())
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	for _, p := range paths {
		comm, ppid, t, ok := readStat(p)
		if !ok || ppid != self {
			continue
		}
		switch comm {
		case "kube-apiserver":
			c.apiserver += t
		case "etcd":
			c.etcd += t
		}
	}
	c.machineBusy, c.machineTotal = machineCPU()
	return c
}

func (c cpu) since(before cpu) cpu {
	return cpu{
		apiserver: c.apiserver - before.apiserver, etcd: c.etcd - before.etcd,
		manager: c.manager - before.manager, harness: c.harness - before.harness,
		machineBusy: c.machineBusy - before.machineBusy, machineTotal: c.machineTotal - before.machineTotal,
	}
}

// ours is the CPU time of the processes of the run.
func (c cpu) ours() time.Duration { return c.apiserver + c.etcd + c.manager + c.harness }

// others is the CPU time the machine spent on processes other than ours.
func (c cpu) others() time.Duration {
	return max(0, c.machineBusy-c.ours())
}

// perClaim is the CPU split of a run, per claim, in milliseconds.
func (c cpu) perClaim(n int) string {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
	return fmt.Sprintf("%.1f/%.1f/%.1f/%.1f", ms(c.apiserver), ms(c.etcd), ms(c.manager), ms(c.harness))
}

func procCPU(pid int) (time.Duration, bool) {
	_, _, t, ok := readStat(fmt.Sprintf("/proc/%d/stat", pid))
	return t, ok
}

// readStat returns a process's command name, parent and user+system CPU time.
func readStat(path string) (string, int, time.Duration, bool) {
	st, ok := procstat.Read(path)
	return st.Comm, st.PPID, st.CPU, ok
}

// machineCPU is the busy and total CPU time of all cores, from /proc/stat.
func machineCPU() (busy, total time.Duration) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var all, idle int64
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			if i >= 8 { // guest times are already counted in user and nice
				break
			}
			all += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		return time.Duration(all-idle) * procstat.ClockTick, time.Duration(all) * procstat.ClockTick
	}
	return 0, 0
}
