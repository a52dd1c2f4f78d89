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

package devenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processRecord remembers the processes a run started (etcd, kube-apiserver,
// kube-controller-manager, the manager) in a file, so that the next run can kill them if this
// one dies without stopping them.
// A process is identified by pid and start time, so a recycled pid is never killed.
type processRecord struct {
	path string
}

func newProcessRecord(path string) *processRecord { return &processRecord{path: path} }

type procInfo struct {
	pid       int
	ppid      int
	startTime string
	comm      string
	state     string
}

// readProc parses /proc/<pid>/stat; comm may contain spaces, so fields are counted from
// the closing parenthesis.
func readProc(pid int) (procInfo, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procInfo{}, err
	}
	s := string(data)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return procInfo{}, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	fields := strings.Fields(s[closing+1:])
	if len(fields) < 20 {
		return procInfo{}, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return procInfo{}, err
	}
	return procInfo{pid: pid, ppid: ppid, comm: s[open+1 : closing], state: fields[0], startTime: fields[19]}, nil
}

// recordChildren records every live child of this process: envtest starts etcd and
// kube-apiserver without telling their pids.
func (r *processRecord) recordChildren() error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, err := readProc(pid)
		if err != nil || p.ppid != self || p.state == "Z" {
			continue
		}
		if err := r.add(p); err != nil {
			return err
		}
	}
	return nil
}

func (r *processRecord) record(pid int) error {
	p, err := readProc(pid)
	if err != nil {
		return err
	}
	return r.add(p)
}

func (r *processRecord) add(p procInfo) error {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, werr := fmt.Fprintf(f, "%d %s %s\n", p.pid, p.startTime, p.comm)
	return errors.Join(werr, f.Close())
}

// killLeftovers kills what an earlier run recorded and is still running, then forgets it.
func (r *processRecord) killLeftovers(log io.Writer) error {
	f, err := os.Open(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var alive []procInfo
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		pid, err := strconv.Atoi(fields[0])
		if err != nil {
			continue
		}
		if p, err := readProc(pid); err == nil && p.startTime == fields[1] {
			alive = append(alive, p)
		}
	}
	_ = f.Close()
	for _, p := range alive {
		fmt.Fprintf(log, "killing %s (pid %d) left over by an earlier run\n", p.comm, p.pid)
		// Our children run in their own process group; take the group down with them.
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	for _, p := range alive {
		if err := waitGone(p, 10*time.Second); err != nil {
			return err
		}
	}
	return r.forget()
}

func waitGone(p procInfo, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		cur, err := readProc(p.pid)
		// A zombie still has a stat file; it holds no ports or files any more.
		if err != nil || cur.startTime != p.startTime || cur.state == "Z" {
			return nil
		}
	}
	return fmt.Errorf("%s (pid %d) left over by an earlier run did not exit", p.comm, p.pid)
}

func (r *processRecord) forget() error {
	if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
