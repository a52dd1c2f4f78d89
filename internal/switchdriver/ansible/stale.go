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
	"syscall"
)

// runDirPrefix names a run's private directory; the manager's pid follows, so a manager
// that starts can tell the directories of a dead one (inventory, key file) from those of a
// live manager sharing the work directory.
const runDirPrefix = "rackwire-run-"

// RemoveStale removes the run directories that managers which are no longer running left in
// workDir (the system's temporary directory when empty), with the SSH masters still serving
// them. It returns how many it removed.
func RemoveStale(workDir string) int {
	if workDir == "" {
		workDir = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(workDir, runDirPrefix+"*"))
	n := 0
	for _, dir := range dirs {
		if alive(ownerOf(filepath.Base(dir))) {
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

// ownerOf reads the manager's pid out of a run directory's name; 0 when it has none.
func ownerOf(name string) int {
	pid, _, ok := strings.Cut(strings.TrimPrefix(name, runDirPrefix), "-")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(pid)
	if err != nil {
		return 0
	}
	return n
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
