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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// broadcast60 is a broadcast frame tagged with VLAN 60 entering a port.
func broadcast60(port string) string {
	return "in_port=" + port + ",dl_src=00:00:00:00:00:01,dl_dst=ff:ff:ff:ff:ff:ff,dl_vlan=60"
}

// A clean port reaches nothing: a host behind a parked port, or behind one whose tenant sent
// an ACL-only change, cannot tag its frames into another tenant's VLAN.
func TestCleanPortReachesNothing(t *testing.T) {
	f := newFixture(t)
	const a, b, c, untouched = "p8", "p9", "p10", "p11"
	res := f.apply(
		switchdriver.Change{Port: a, Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(60)}},
		switchdriver.Change{Port: b, Config: parking},
		// C is brought to its clean state as the operator does with every port it starts
		// managing, before any tenant change.
		switchdriver.Change{Port: c, Config: parking},
	)
	for p, err := range res {
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	aclOnly := &networkv1alpha1.SwitchPortConfigurationSpec{ACL: []networkv1alpha1.ACL{{Type: "ipv4", Action: "allow", Protocol: "ALL"}}}
	res = f.apply(switchdriver.Change{Port: c, Config: aclOnly})
	if err := res[c]; !errors.Is(err, switchdriver.ErrRefused) || !strings.Contains(err.Error(), "untaggedVLAN or vlans") {
		t.Fatalf("an ACL-only change must be refused, naming both fields: %v", err)
	}

	// The control: a port left on Open vSwitch's default does carry VLAN 60 to A.
	out, err := lab.Trace(broadcast60(untouched))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(out, a) {
		t.Fatalf("the trace of a default port should reach %s (OVS trunks every VLAN there), got %v", a, out)
	}
	for _, from := range []string{b, c} {
		out, err := lab.Trace(broadcast60(from))
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(out, a) {
			t.Errorf("a frame tagged 60 entering %s leaves on %s: %v", from, a, out)
		}
	}

	got, err := f.read(b, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{b, c} {
		if got[p].UntaggedVLAN == nil || *got[p].UntaggedVLAN != 4000 || got[p].VLANs != "" || len(got[p].ACL) != 0 || got[p].Disabled {
			t.Errorf("%s on the switch is %+v, not its clean definition", p, got[p])
		}
	}
	for col, want := range map[string]string{"tag": "4000", "vlan_mode": "access", "trunks": "[]"} {
		if v := get(t, "Port", b, col); v != want {
			t.Errorf("%s %s = %s, want %s", b, col, v, want)
		}
	}
	// The read-back of the untouched port says what it does: it carries every VLAN.
	got, err = f.read(untouched)
	if err != nil {
		t.Fatal(err)
	}
	if got[untouched].VLANs != "1-4094" {
		t.Errorf("the read-back calls a default port %+v; it trunks every VLAN", got[untouched])
	}
}

// The manager's own environment never reaches ansible-playbook: a verbosity or a log path
// set for the manager changes nothing about a run and writes no log.
func TestRunEnvironmentIsItsOwn(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "ansible.log")
	t.Setenv("ANSIBLE_VERBOSITY", "4")
	t.Setenv("ANSIBLE_LOG_PATH", logFile)
	t.Setenv("ANSIBLE_STDOUT_CALLBACK", "yaml")
	f := newFixture(t)
	res := f.apply(switchdriver.Change{Port: "p7", Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(17)}})
	if res["p7"] != nil {
		t.Fatalf("apply with the manager's ANSIBLE_* set: %v", res["p7"])
	}
	if v := get(t, "Port", "p7", "tag"); v != "17" {
		t.Errorf("p7 tag %s", v)
	}
	if _, err := f.read("p7"); err != nil {
		t.Fatalf("read: %v", err)
	}
	if _, err := os.Stat(logFile); !os.IsNotExist(err) {
		t.Errorf("the run wrote the manager's ANSIBLE_LOG_PATH %s (%v)", logFile, err)
	}
}

// A missing ansible-playbook, or one that dies before its report, is named as such.
func TestPlaybookMissingOrDying(t *testing.T) {
	f := newFixture(t)
	change := switchdriver.Change{Port: "p7", Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(17)}}

	d, err := Factory(Config{WorkDir: f.work, Playbook: "/nonexistent/ansible-playbook"})(f.asw, f.secret)
	if err != nil {
		t.Fatal(err)
	}
	res := d.Apply(t.Context(), []switchdriver.Change{change})
	if err := res["p7"]; !errors.Is(err, switchdriver.ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/ansible-playbook cannot be started") {
		t.Errorf("a missing ansible-playbook: %v", err)
	}

	dying := filepath.Join(t.TempDir(), "ansible-playbook")
	script := "#!/bin/sh\necho 'ERROR! the role network-runner was not found' >&2\nexit 4\n"
	if err := os.WriteFile(dying, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err = Factory(Config{WorkDir: f.work, Playbook: dying})(f.asw, f.secret)
	if err != nil {
		t.Fatal(err)
	}
	res = d.Apply(t.Context(), []switchdriver.Change{change})
	if err := res["p7"]; err == nil || !strings.Contains(err.Error(), "exit status 4") || !strings.Contains(err.Error(), "the role network-runner was not found") {
		t.Errorf("an ansible-playbook that dies early: %v", err)
	}
	assertNoRunLeft(t, f.work)
}

// A manager that starts removes the run directories of managers that are gone, and only those.
func TestRemoveStale(t *testing.T) {
	work := t.TempDir()
	dead := filepath.Join(work, runDirName(deadPid(t), 1000, bootID(), "123"))
	live := filepath.Join(work, runDirPrefix+instance()+"-456")
	old := filepath.Join(work, runDirPrefix+"789")
	for _, d := range []string{dead, live, old} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "inventory.yaml"), []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n := RemoveStale(work); n != 2 {
		t.Errorf("removed %d, want 2", n)
	}
	for d, want := range map[string]bool{dead: false, live: true, old: false} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", d, err == nil, want)
		}
	}
}

// deadPid is a pid no process has.
func deadPid(t *testing.T) int {
	for pid := 4_000_000; pid > 3_000_000; pid-- {
		if startTime(strconv.Itoa(pid)) == 0 {
			return pid
		}
	}
	t.Fatal("no free pid")
	return 0
}

// Issue 27, defect 7: after a container restart the new manager has its predecessor's pid
// (often 1), so a sweep by pid kept the dead manager's run directories, inventory password
// and key included. Run directories are named after the boot and the process' start time
// too: a predecessor with the same pid, or one from an earlier boot, is swept.
func TestRemoveStaleAfterRestart(t *testing.T) {
	work := t.TempDir()
	boot := readBootID(t)
	start := readStartTime(t, "/proc/self/stat")
	pid := os.Getpid()
	predecessor := filepath.Join(work, runDirName(pid, start+1, boot, "1"))
	otherBoot := "0000"
	if boot == otherBoot {
		otherBoot = "0001"
	}
	earlierBoot := filepath.Join(work, runDirName(pid, start, otherBoot, "2"))
	live := filepath.Join(work, runDirName(pid, start, boot, "3"))
	// An older manager's directory, named by its pid alone: always stale, even with ours.
	legacy := filepath.Join(work, fmt.Sprintf("%s%d-4", legacyRunDirPrefix, pid))
	for _, d := range []string{predecessor, earlierBoot, live, legacy} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "inventory.yaml"), []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	RemoveStale(work)
	for d, want := range map[string]bool{predecessor: false, earlierBoot: false, live: true, legacy: false} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}

func readBootID(t *testing.T) string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")[:4]
}

// runDirName is a run directory's name as a manager of that pid, start time and boot makes it.
func runDirName(pid int, start uint64, boot, suffix string) string {
	return runDirPrefix + strconv.FormatInt(int64(pid), 36) + "-" + strconv.FormatUint(start, 36) + boot + "-" + suffix
}

func readStartTime(t *testing.T, stat string) uint64 {
	b, err := os.ReadFile(stat)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue 27, item 9: nothing bounded the ansible-playbook processes running at once, and at
// start-up every switch's ports are read at once. A factory's drivers now share
// MaxProcesses slots: six switches applied at once never run more than two processes.
func TestFactoryBoundsConcurrentPlaybooks(t *testing.T) {
	f := newFixture(t)
	marks := t.TempDir()
	fakePlaybook := filepath.Join(t.TempDir(), "ansible-playbook")
	script := fmt.Sprintf("#!/bin/sh\ntouch %[1]s/run.$$\nls %[1]s | grep -c '^run\\.' >> %[1]s/counts\nsleep 1\nrm %[1]s/run.$$\nexit 4\n", marks)
	if err := os.WriteFile(fakePlaybook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	factory := Factory(Config{WorkDir: f.work, Playbook: fakePlaybook, MaxProcesses: 2})
	var wg sync.WaitGroup
	for i := range 6 {
		d, err := factory(f.asw, f.secret)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			_ = d.Apply(t.Context(), []switchdriver.Change{{Port: fmt.Sprintf("p%d", i), Config: parking}})
		})
	}
	wg.Wait()
	b, err := os.ReadFile(filepath.Join(marks, "counts"))
	if err != nil {
		t.Fatal(err)
	}
	counts := strings.Fields(string(b))
	if len(counts) != 6 {
		t.Fatalf("%d runs started, want 6", len(counts))
	}
	for _, c := range counts {
		if n, _ := strconv.Atoi(c); n > 2 {
			t.Errorf("%d ansible-playbook processes ran at once, want at most 2 (counts %v)", n, counts)
		}
	}
}
