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
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// runDirPrefix names a run's private directory. The manager's pid, its start time (in
// clock ticks since boot) and the boot's id follow: a manager that starts tells the
// directories of a dead one (inventory, key file) from those of a live manager sharing the
// work directory by all three, since a restarted container's manager has its predecessor's
// pid (often 1), and a rebooted machine's clock ticks start again.
const runDirPrefix = "rackwire-run-"

// instance names this process: pid, start time and boot.
func instance() string {
	return fmt.Sprintf("%d-%d-%s", os.Getpid(), startTime(strconv.Itoa(os.Getpid())), bootID())
}

// bootID is the first eight hex digits of the kernel's boot id ("unknown" without /proc).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	id := strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
	if err != nil || len(id) < 8 {
		return "unknown"
	}
	return id[:8]
}

// startTime is when a process started, in clock ticks since boot (field 22 of its stat);
// 0 when it has none (no such process).
func startTime(pid string) uint64 {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

// RemoveStale removes the run directories that managers which are no longer running left in
// workDir (the system's temporary directory when empty), with the SSH masters still serving
// them. It returns how many it removed.
func RemoveStale(workDir string) int {
	if workDir == "" {
		workDir = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(workDir, runDirPrefix+"*"))
	n := 0
	boot := bootID()
	for _, dir := range dirs {
		if running(filepath.Base(dir), boot) {
			continue
		}
		w := &workspace{dir: dir}
		w.closeMasters()
		if os.RemoveAll(dir) == nil {
			n++
		}
	}
	return n
}

// running tells whether the manager that made a run directory still runs: same boot, and
// its pid held by a process that started when it did. A name in any other form (an older
// manager's) is stale.
func running(name, boot string) bool {
	f := strings.SplitN(strings.TrimPrefix(name, runDirPrefix), "-", 4)
	if len(f) != 4 || f[2] != boot {
		return false
	}
	start, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil || start == 0 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	return err == nil && pid > 0 && startTime(f[0]) == start
}
