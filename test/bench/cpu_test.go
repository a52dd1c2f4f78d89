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
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on every Linux
// architecture Go supports).
const clockTick = 10 * time.Millisecond

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
	data, err := os.ReadFile(path)
	if err != nil {
		return "", 0, 0, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, 0, false
	}
	f := strings.Fields(s[end+1:])
	// After the command: state, ppid, ..., utime (11), stime (12).
	if len(f) < 13 {
		return "", 0, 0, false
	}
	ppid, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return s[open+1 : end], ppid, time.Duration(ut+st) * clockTick, true
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
		return time.Duration(all-idle) * clockTick, time.Duration(all) * clockTick
	}
	return 0, 0
}
