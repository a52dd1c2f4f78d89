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
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
	"github.com/rackwire/rackwire/internal/switchlab"
)

// These tests drive the real ansible-playbook, network-runner role and Open vSwitch (the
// lab of hack/switch-lab.sh, over SSH on loopback) and check the switch with ovs-vsctl.

var lab *switchlab.Lab

func TestMain(m *testing.M) {
	var err error
	lab, err = switchlab.Start("../../..", 18)
	if err != nil {
		panic(err)
	}
	code := m.Run()
	_ = lab.Stop()
	os.Exit(code)
}

type fixture struct {
	t       *testing.T
	work    string
	asw     *networkv1alpha1.AnsibleSwitch
	secret  *corev1.Secret
	timeout time.Duration
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, work: shortTempDir(t), timeout: 2 * time.Minute}
	f.asw = &networkv1alpha1.AnsibleSwitch{
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "leaf1"},
		Spec: networkv1alpha1.AnsibleSwitchSpec{
			OS: "openvswitch", IP: lab.Host, Port: lab.Port, Bridge: lab.Bridge,
			HostKeys: []string{lab.HostKey}, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leaf1"},
		},
	}
	f.secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "leaf1"},
		Data:       map[string][]byte{KeyUsername: []byte(lab.User), KeyPassword: []byte(lab.Password)},
	}
	return f
}

func (f *fixture) build() switchdriver.Driver {
	f.t.Helper()
	d, err := Factory(Config{WorkDir: f.work, ConnectTimeout: 5 * time.Second})(f.asw, f.secret)
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

func (f *fixture) apply(changes ...switchdriver.Change) map[string]error {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	return f.build().Apply(ctx, changes)
}

func (f *fixture) read(ports ...string) (map[string]*networkv1alpha1.SwitchPortConfigurationSpec, error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	return f.build().Read(ctx, ports)
}

func get(t *testing.T, table, record, column string) string {
	t.Helper()
	v, err := lab.Get(table, record, column)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func vid(id int) *networkv1alpha1.VLANID { v := networkv1alpha1.VLANID(id); return &v }

// parking is the clean state the tests park ports in: an access port of VLAN 4000.
var parking = &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(4000)}

func TestApplyReadAndClean(t *testing.T) {
	f := newFixture(t)
	access := &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(10)}
	trunk := &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(5), VLANs: "20, 30-32"}
	pureTrunk := &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "100"}
	locked := &networkv1alpha1.SwitchPortConfigurationSpec{
		UntaggedVLAN: vid(7), Disabled: true,
		ACL: []networkv1alpha1.ACL{
			{Type: "ipv4", Action: "allow", Protocol: "TCP", Src: "10.0.0.0/8", DesPortRange: "22"},
			{Type: "ipv4", Action: "deny", Protocol: "ALL"},
		},
	}
	res := f.apply(
		switchdriver.Change{Port: "p0", Config: access},
		switchdriver.Change{Port: "p1", Config: trunk},
		switchdriver.Change{Port: "p2", Config: pureTrunk},
		switchdriver.Change{Port: "p3", Config: locked},
		switchdriver.Change{Port: "missing", Config: access},
	)
	for _, p := range []string{"p0", "p1", "p2", "p3"} {
		if res[p] != nil {
			t.Fatalf("%s: %v", p, res[p])
		}
	}
	if err := res["missing"]; err == nil || !strings.Contains(err.Error(), `no row "missing"`) {
		t.Fatalf("the missing port should fail alone with the switch's message, got %v", err)
	}
	for _, c := range []struct{ port, column, want string }{
		{"p0", "tag", "10"}, {"p0", "vlan_mode", "access"}, {"p0", "trunks", "[]"},
		{"p1", "tag", "5"}, {"p1", "vlan_mode", "native-untagged"}, {"p1", "trunks", "[20, 30, 31, 32]"},
		{"p2", "tag", "[]"}, {"p2", "vlan_mode", "trunk"}, {"p2", "trunks", "[100]"},
		{"p3", "tag", "7"},
	} {
		if got := get(t, "Port", c.port, c.column); got != c.want {
			t.Errorf("%s %s = %s, want %s", c.port, c.column, got, c.want)
		}
	}
	if got := get(t, "Interface", "p3", "admin_state"); got != "down" {
		t.Errorf("disabled p3 is %s", got)
	}
	flows, err := lab.Ofctl("dump-flows", lab.Bridge, "in_port=p3")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(flows, "priority=40000,tcp,") || !strings.Contains(flows, "nw_src=10.0.0.0/8,tp_dst=22 actions=NORMAL") ||
		!strings.Contains(flows, "priority=39999,ip,") || !strings.Contains(flows, "actions=drop") {
		t.Errorf("p3's rules are not on the bridge:\n%s", flows)
	}

	got, err := f.read("p0", "p1", "p2", "p3")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]*networkv1alpha1.SwitchPortConfigurationSpec{"p0": access, "p1": trunk, "p2": pureTrunk, "p3": locked} {
		if !equality.Semantic.DeepEqual(got[p], want) {
			t.Errorf("read %s = %+v, want %+v", p, got[p], want)
		}
	}

	// A tag changed at the console is drift.
	if _, err := lab.Vsctl("set", "Port", "p0", "tag=11"); err != nil {
		t.Fatal(err)
	}
	// A rule removed at the console too.
	if _, err := lab.Ofctl("del-flows", lab.Bridge, "in_port=p3,ip"); err != nil {
		t.Fatal(err)
	}
	got, err = f.read("p0", "p3")
	if err != nil {
		t.Fatal(err)
	}
	if got["p0"].UntaggedVLAN == nil || *got["p0"].UntaggedVLAN != 11 {
		t.Errorf("read p0 after the console change = %+v", got["p0"])
	}
	if equality.Semantic.DeepEqual(got["p3"], locked) {
		t.Error("read p3 does not show the removed rule")
	}

	// Cleaning parks the ports on the bridge: access ports of the parking VLAN, no trunks,
	// no rules, up, recorded as such.
	res = f.apply(switchdriver.Change{Port: "p1", Config: parking}, switchdriver.Change{Port: "p3", Config: parking})
	if res["p1"] != nil || res["p3"] != nil {
		t.Fatalf("clean: %v", res)
	}
	for _, p := range []string{"p1", "p3"} {
		for col, want := range map[string]string{"tag": "4000", "vlan_mode": "access", "trunks": "[]"} {
			if v := get(t, "Port", p, col); v != want {
				t.Errorf("cleaned %s has %s %s, want %s", p, col, v, want)
			}
		}
	}
	if got := get(t, "Interface", "p3", "admin_state"); got != "up" {
		t.Errorf("cleaned p3 is %s", got)
	}
	ports, err := lab.Vsctl("list-ports", lab.Bridge)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ports, "p1\n") || !strings.Contains(ports, "p3\n") {
		t.Errorf("cleaning took ports off the bridge: %q", ports)
	}
	if flows, _ := lab.Ofctl("dump-flows", lab.Bridge, "in_port=p3"); strings.Contains(flows, "cookie=") {
		t.Errorf("cleaned p3 keeps rules:\n%s", flows)
	}
	got, err = f.read("p1", "p3")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"p1", "p3"} {
		if !equality.Semantic.DeepEqual(got[p], parking) {
			t.Errorf("read of cleaned %s = %+v, want the parking configuration", p, got[p])
		}
	}
	assertNoRunLeft(t, f.work)
}

func TestCheck(t *testing.T) {
	f := newFixture(t)
	if _, err := f.read(); err != nil {
		t.Fatalf("check: %v", err)
	}
	f.asw.Spec.Bridge = "br-none"
	if _, err := f.read(); err == nil || !strings.Contains(err.Error(), "bridge br-none does not exist") {
		t.Fatalf("check of a missing bridge: %v", err)
	}
}

func TestWrongPassword(t *testing.T) {
	f := newFixture(t)
	const wrong = "not-the-{{password}}"
	f.secret.Data[KeyPassword] = []byte(wrong)
	res := f.apply(switchdriver.Change{Port: "p4", Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(3)}})
	err := res["p4"]
	if !errors.Is(err, switchdriver.ErrAuthentication) {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), "password}}") {
		t.Fatalf("the error shows the password: %v", err)
	}
	if v := get(t, "Port", "p4", "tag"); v != "[]" {
		t.Errorf("p4 changed to %s", v)
	}
	assertNoRunLeft(t, f.work)
}

func TestUnknownHostKey(t *testing.T) {
	f := newFixture(t)
	f.asw.Spec.HostKeys = []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK0wmN/Cr3JXqmLW7u+g9pTh+wyqDHpSQEIQczXkVx9q"}
	res := f.apply(switchdriver.Change{Port: "p4", Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(3)}})
	if err := res["p4"]; err == nil || !strings.Contains(strings.ToLower(err.Error()), "host key") {
		t.Fatalf("a switch with another host key was driven: %v", err)
	}
	if v := get(t, "Port", "p4", "tag"); v != "[]" {
		t.Errorf("p4 changed to %s", v)
	}
}

func TestHungSwitch(t *testing.T) {
	hung, err := switchlab.StartHungSwitch()
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	f := newFixture(t)
	f.asw.Spec.Port = hung.Port()
	f.timeout = 3 * time.Second
	start := time.Now()
	res := f.apply(switchdriver.Change{Port: "p5", Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(3)}})
	if !errors.Is(res["p5"], switchdriver.ErrTimeout) {
		t.Fatalf("hung switch: %v", res["p5"])
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the run came back %v after its 3s limit", took)
	}
	assertNoRunLeft(t, f.work)
}

// ACLs exist for openvswitch only: on another OS a change with one fails alone, before any
// run (disabled works everywhere: TestCLIApplyPerOS). Drift read-back is openvswitch's only.
func TestUnsupportedFeatures(t *testing.T) {
	f := newFixture(t)
	f.asw.Spec.OS = "eos"
	res := f.apply(
		switchdriver.Change{Port: "Ethernet1", Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(5), ACL: []networkv1alpha1.ACL{{Type: "ipv4", Action: "deny", Protocol: "ALL"}}}},
	)
	if err := res["Ethernet1"]; !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "access rules") || !strings.Contains(err.Error(), "os eos") {
		t.Errorf("Ethernet1: %v", err)
	}
	if _, err := f.read("Ethernet1"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("read on eos: %v", err)
	}
}

func TestPrivateKeyLogin(t *testing.T) {
	f := newFixture(t)
	key := filepath.Join(t.TempDir(), "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lab.AuthorizedKeys, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Remove(lab.AuthorizedKeys) }()
	private, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	f.secret.Data = map[string][]byte{KeyUsername: []byte(lab.User), KeyPrivateKey: private}
	res := f.apply(switchdriver.Change{Port: "p6", Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(6)}})
	if res["p6"] != nil {
		t.Fatalf("key login: %v", res["p6"])
	}
	if v := get(t, "Port", "p6", "tag"); v != "6" {
		t.Errorf("p6 tag %s", v)
	}
	assertNoRunLeft(t, f.work)
}

func TestCredentials(t *testing.T) {
	f := newFixture(t)
	delete(f.secret.Data, KeyPassword)
	if _, err := Factory(Config{})(f.asw, f.secret); !errors.Is(err, switchdriver.ErrCredentials) {
		t.Errorf("no password nor key: %v", err)
	}
	f.secret.Data = map[string][]byte{KeyPassword: []byte("x")}
	if _, err := Factory(Config{})(f.asw, f.secret); !errors.Is(err, switchdriver.ErrCredentials) {
		t.Errorf("no username: %v", err)
	}
}

// assertNoRunLeft checks that a run left neither files (the inventory with the password)
// nor processes behind: every process of a run names its directory on its command line.
func assertNoRunLeft(t *testing.T, work string) {
	t.Helper()
	entries, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("runs left %d entries in their work directory", len(entries))
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), work) {
			t.Errorf("process %s outlived its run: %s", p, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}
