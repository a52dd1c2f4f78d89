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
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// runDirPrefix names a run's private directory. The manager's pid, then its start time (in
// clock ticks since boot) and the boot's id follow, short (base 36, then the boot id's first
// four hex digits): a manager that starts tells the directories of a dead one (inventory, key file) from
// those of a live manager sharing the work directory by all three, since a restarted
// container's manager has its predecessor's pid (often 1), and a rebooted machine's clock
// ticks start again. The name stays short because SSH's control sockets live under it, and a
// Unix socket's path is limited to 108 bytes.
const runDirPrefix = "rwrun-"

// legacyRunDirPrefix names the run directories of older managers, which named them by pid
// alone; they are always stale.
const legacyRunDirPrefix = "rackwire-run-"

// instance names this process: pid, start time and boot.
func instance() string {
	pid := os.Getpid()
	return strconv.FormatInt(int64(pid), 36) + "-" + strconv.FormatUint(startTime(strconv.Itoa(pid)), 36) + bootID()
}

// bootID is the first four hex digits of the kernel's boot id ("none" without /proc).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	id := strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
	if err != nil || len(id) < 4 {
		return "none"
	}
	return id[:4]
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
	legacy, _ := filepath.Glob(filepath.Join(workDir, legacyRunDirPrefix+"*"))
	n := 0
	boot := bootID()
	for _, dir := range append(dirs, legacy...) {
		if strings.HasPrefix(filepath.Base(dir), runDirPrefix) && running(filepath.Base(dir), boot) {
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
	f := strings.SplitN(strings.TrimPrefix(name, runDirPrefix), "-", 3)
	if len(f) != 3 || len(f[1]) <= len(boot) || !strings.HasSuffix(f[1], boot) {
		return false
	}
	start, err := strconv.ParseUint(strings.TrimSuffix(f[1], boot), 36, 64)
	if err != nil || start == 0 {
		return false
	}
	pid, err := strconv.ParseInt(f[0], 36, 32)
	return err == nil && pid > 0 && startTime(strconv.FormatInt(pid, 10)) == start
}
