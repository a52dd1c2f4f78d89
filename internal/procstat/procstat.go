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

// Package procstat reads what the benchmarks measure of a process from /proc/<pid>/stat:
// its command name, its parent and the CPU time it used.
package procstat

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on every Linux
// architecture Go supports).
const ClockTick = 10 * time.Millisecond

// Stat is what Read returns.
type Stat struct {
	Comm string
	PPID int
	// CPU is user plus system time.
	CPU time.Duration
}

// Read parses a /proc/<pid>/stat file; false when it is gone or unreadable.
func Read(path string) (Stat, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Stat{}, false
	}
	f := strings.Fields(s[end+1:])
	// After the command: state, ppid, ..., utime (11), stime (12).
	if len(f) < 13 {
		return Stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return Stat{Comm: s[open+1 : end], PPID: ppid, CPU: time.Duration(ut+st) * ClockTick}, true
}
