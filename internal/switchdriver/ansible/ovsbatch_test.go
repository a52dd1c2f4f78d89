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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// The script's own logic against stand-ins for ovs-vsctl and ovs-ofctl: a switch that
// refuses any transaction naming port p-bad, and whose bridge lacks port p-gone.
func TestOVSScriptSplitsARefusedBatch(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fake := map[string]string{
		"ovs-vsctl": `#!/bin/sh
echo "vsctl $*" >> ` + calls + `
case "$*" in
  *list-ports*) printf 'p-ok\np-bad\np-acl\n'; exit 0;;
  *"list Interface"*) printf 'p-ok,up\np-bad,up\np-acl,up\n'; exit 0;;
  *p-bad*) echo 'ovs-vsctl: "p-bad" refused' >&2; exit 1;;
esac
exit 0
`,
		"ovs-ofctl": `#!/bin/sh
echo "ofctl $* $(cat)" >> ` + calls + `
exit 0
`,
	}
	for name, body := range fake {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	u := 10
	ports := []portVars{
		{Port: "p-ok", Mode: "access", Untagged: &u, State: true},
		{Port: "p-bad", Mode: "trunk", Trunked: []int{20, 21}, State: true},
		{Port: "p-gone", Mode: "access", Untagged: &u},
		{Port: "p-acl", Mode: "access", Untagged: &u, ACL: &aclVars{Cookie: "0x1", Flows: []string{"priority=1,in_port=p-acl,actions=drop"}}, State: true, Disabled: true},
	}
	cmd := exec.Command("sh", "-c", ovsApplyScript("br0", ports))
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	var report map[string]struct {
		OK        bool
		Task, Msg string
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if !report["p-ok"].OK || !report["p-acl"].OK {
		t.Errorf("the good ports failed with the bad one: %+v", report)
	}
	if r := report["p-bad"]; r.OK || !strings.Contains(r.Msg, `"p-bad" refused`) || !strings.Contains(r.Task, "set the VLANs of p-bad") {
		t.Errorf("p-bad: %+v", r)
	}
	if r := report["p-gone"]; r.OK || !strings.Contains(r.Msg, `no row "p-gone"`) {
		t.Errorf("p-gone: %+v", r)
	}
	log, _ := os.ReadFile(calls)
	l := string(log)
	if !strings.Contains(l, "ofctl --timeout=30 -O OpenFlow14 --bundle add-flows br0 - delete cookie=0x1/-1,in_port=p-acl\nadd priority=1,in_port=p-acl,actions=drop") {
		t.Errorf("no bundle for p-acl:\n%s", l)
	}
	if !strings.Contains(l, "mod-port br0 p-acl down") || strings.Contains(l, "mod-port br0 p-ok") {
		t.Errorf("admin state must change only where it differs:\n%s", l)
	}
	if strings.Count(l, "vsctl --timeout=30 -- set Port p-ok") != 2 {
		t.Errorf("want p-ok in the batch and in its own retry:\n%s", l)
	}
}

// A run of many ports travels as one ssh argument, which Linux caps at 128 KiB: the real
// driver applies 12 lab ports and 500 missing ones (each with its record) in one run, the
// lab's ports configured and every missing one failing alone.
func TestOVSBigBatch(t *testing.T) {
	f := newFixture(t)
	f.timeout = 5 * time.Minute
	var changes []switchdriver.Change
	for i := range 12 {
		changes = append(changes, switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(40), VLANs: "100-200, 300"}})
	}
	for i := range 500 {
		changes = append(changes, switchdriver.Change{Port: fmt.Sprintf("missing%d", i), Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(40), VLANs: "100-200, 300"}})
	}
	res := f.apply(changes...)
	for _, c := range changes {
		err := res[c.Port]
		switch missing := strings.HasPrefix(c.Port, "missing"); {
		case missing && (err == nil || !strings.Contains(err.Error(), "no row")):
			t.Fatalf("%s: %v", c.Port, err)
		case !missing && err != nil:
			t.Fatalf("%s: %v", c.Port, err)
		}
	}
	if got := get(t, "Port", "p11", "tag"); got != "40" {
		t.Errorf("p11 holds tag %s", got)
	}
	// Park the ports again for the other tests.
	var park []switchdriver.Change
	for i := range 12 {
		park = append(park, switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: parking})
	}
	for p, err := range f.apply(park...) {
		if err != nil {
			t.Fatalf("parking %s: %v", p, err)
		}
	}
}

// Issue 27, defect 5: the run travelled as one ssh argument, so the access rules of a few
// ports (within the admission bound) pushed it over Linux's 128 KiB and every port of the
// run failed. The script now travels as a file: the same run configures every port.
func TestOVSScriptAsFile(t *testing.T) {
	f := newFixture(t)
	f.timeout = 5 * time.Minute
	var changes []switchdriver.Change
	for i := range 12 {
		var acl []networkv1alpha1.ACL
		for r := range 2 {
			acl = append(acl, networkv1alpha1.ACL{Type: "ipv4", Action: "deny", Protocol: "TCP",
				Src:          networkv1alpha1.CIDR(fmt.Sprintf("10.%d.%d.0/24", i, r)),
				SrcPortRange: networkv1alpha1.PortRange(fmt.Sprintf("%d-65534", 1+i)), DesPortRange: networkv1alpha1.PortRange(fmt.Sprintf("%d-65533", 1+r))})
		}
		cfg := &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(40), ACL: acl}
		changes = append(changes, switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: cfg},
			switchdriver.Change{Port: fmt.Sprintf("missing%d", i), Config: cfg})
	}
	res := f.apply(changes...)
	for _, c := range changes {
		err := res[c.Port]
		switch missing := strings.HasPrefix(c.Port, "missing"); {
		case missing && (err == nil || !strings.Contains(err.Error(), "no row")):
			t.Errorf("%s: got %v, want its own failure", c.Port, err)
		case !missing && err != nil:
			t.Errorf("%s: %v", c.Port, err)
		}
	}
	if got := get(t, "Port", "p11", "tag"); got != "40" {
		t.Errorf("p11 holds tag %s", got)
	}
	var park []switchdriver.Change
	for i := range 12 {
		park = append(park, switchdriver.Change{Port: fmt.Sprintf("p%d", i), Config: parking})
	}
	for p, err := range f.apply(park...) {
		if err != nil {
			t.Fatalf("parking %s: %v", p, err)
		}
	}
}
