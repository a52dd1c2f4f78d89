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
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/fakeswitch"
	"github.com/rackwire/rackwire/internal/netcli"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// These tests drive the real ansible-playbook (network_cli and its OS plugins from the
// installed collections, or plain SSH for Cumulus) against a fake switch per OS
// (internal/fakeswitch) and compare the commands it received with testdata/cli/<os>.txt.
// `go test -run TestCLI -update` rewrites the fixtures.

var update = flag.Bool("update", false, "rewrite the command fixtures of the network_cli tests")

// cliPorts are the ports of each OS's fake switch, named as the OS names them.
var cliPorts = map[string][]string{
	"eos":             {"Ethernet1", "Ethernet2", "Ethernet3"},
	"nxos":            {"Ethernet1/1", "Ethernet1/2", "Ethernet1/3"},
	"dellos10":        {"ethernet1/1/1", "ethernet1/1/2", "ethernet1/1/3"},
	"dellemc.os9.os9": {"TenGigabitEthernet0/1", "TenGigabitEthernet0/2", "TenGigabitEthernet0/3"},
	"enos":            {"1", "2", "3"},
	"junos":           {"ge-0/0/1", "ge-0/0/2", "ge-0/0/3"},
	"cumulus":         {"swp1", "swp2", "swp3"},
}

type cliFixture struct {
	t      *testing.T
	os     string
	fake   *fakeswitch.Switch
	asw    *networkv1alpha1.AnsibleSwitch
	secret *corev1.Secret
	work   string
}

func writeFixture(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func newCLIFixture(t *testing.T, os string, enable string, hang string) *cliFixture {
	t.Helper()
	return newCLIFixtureOf(t, fakeswitch.Options{
		OS: os, User: "admin", Password: "s3cret{{ x }}", Enable: enable, Ports: cliPorts[os], Hang: hang,
	})
}

func newCLIFixtureOf(t *testing.T, o fakeswitch.Options) *cliFixture {
	t.Helper()
	os, enable := o.OS, o.Enable
	fake, err := fakeswitch.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	f := &cliFixture{t: t, os: os, fake: fake, work: shortTempDir(t)}
	f.asw = &networkv1alpha1.AnsibleSwitch{
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "leaf-" + strings.ReplaceAll(os, ".", "-")},
		Spec: networkv1alpha1.AnsibleSwitchSpec{
			OS: os, IP: fake.Host, Port: fake.Port, HostKeys: []string{fake.HostKey},
			CredentialsSecret: networkv1alpha1.SecretRef{Name: "leaf"},
		},
	}
	f.secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "leaf"},
		Data:       map[string][]byte{KeyUsername: []byte("admin"), KeyPassword: []byte("s3cret{{ x }}")},
	}
	if enable != "" {
		f.secret.Data[KeyEnableSecret] = []byte(enable)
	}
	return f
}

func (f *cliFixture) driver() switchdriver.Driver {
	f.t.Helper()
	d, err := Factory(Config{WorkDir: f.work, ConnectTimeout: 10 * time.Second})(f.asw, f.secret)
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// missingPort is a port name in each OS's style that its fake switch lacks.
func missingPort(os string) string {
	if os == "enos" {
		return "9"
	}
	return cliPorts[os][0] + "9"
}

// sessionName is the random part of an EOS configure session.
var sessionName = regexp.MustCompile(`ansible_\d+`)

func TestCLIApplyPerOS(t *testing.T) {
	for _, os := range netcli.OSes() {
		t.Run(os, func(t *testing.T) {
			t.Parallel()
			dialect, _ := netcli.Lookup(os)
			enable := ""
			if dialect.Enable {
				enable = "en4ble"
			}
			f := newCLIFixture(t, os, enable, "")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if _, err := f.driver().Read(ctx, nil); err != nil {
				t.Fatalf("check: %v", err)
			}
			ports := cliPorts[os]
			res := f.driver().Apply(ctx, []switchdriver.Change{
				{Port: ports[0], Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(60)}},
				{Port: ports[1], Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(5), VLANs: "100-200, 300"}},
				{Port: ports[2], Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "61-63", Disabled: true}, Parking: 4000},
				{Port: missingPort(os), Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(60)}},
				{Port: "acl0", Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(60), ACL: []networkv1alpha1.ACL{{Type: "ipv4", Action: "allow", Protocol: "TCP"}}}},
			})
			for _, p := range ports {
				if res[p] != nil {
					t.Errorf("port %s: %v", p, res[p])
				}
			}
			// What the ports carry, as the OS would forward with what it received.
			for _, c := range []struct {
				port             string
				untagged, tagged []int
			}{
				{ports[0], []int{60}, nil},
				{ports[1], []int{5}, append(vlanIDs(100, 200), 300)},
				{ports[2], []int{0, 4000}, vlanIDs(61, 63)},
			} {
				got := f.fake.PortState(c.port)
				if !slices.Contains(c.untagged, got.Untagged) || !slices.Equal(got.Tagged, c.tagged) || !got.Bridged {
					t.Errorf("port %s carries %+v; want untagged one of %v, tagged %v, bridged", c.port, got, c.untagged, c.tagged)
				}
			}
			if err := res[missingPort(os)]; err == nil {
				t.Errorf("the missing port %s was configured", missingPort(os))
			}
			if err := res["acl0"]; !errors.Is(err, ErrUnsupported) {
				t.Errorf("an ACL on os %s: got %v, want ErrUnsupported", os, err)
			}
			got := sessionName.ReplaceAllString(strings.Join(f.fake.Commands(), "\n")+"\n", "ansible_SESSION")
			fixture := filepath.Join("testdata", "cli", os+".txt")
			if *update {
				if err := writeFixture(fixture, got); err != nil {
					t.Fatal(err)
				}
			}
			want, err := readFile(fixture)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("os %s received other commands than %s (-update rewrites it):\n%s", os, fixture, got)
			}
		})
	}
}

// A cancelled run on a network_cli switch leaves no process behind: ansible-connection, the
// persistent connection daemon, leaves the run's process group and is swept by its
// environment, which names the run's directory.
func TestCLICancelledRunLeavesNoConnectionDaemon(t *testing.T) {
	f := newCLIFixture(t, "eos", "", "configure session")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan map[string]error)
	go func() {
		done <- f.driver().Apply(ctx, []switchdriver.Change{
			{Port: cliPorts["eos"][0], Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(60)}},
		})
	}()
	// The switch hangs once the push begins; by then the daemon holds the session.
	deadline := time.Now().Add(2 * time.Minute)
	for !hung(f.fake) {
		if time.Now().After(deadline) {
			t.Fatalf("the push never reached the switch; it received %q", f.fake.Commands())
		}
		time.Sleep(100 * time.Millisecond)
	}
	daemons := 0
	for _, pid := range processesOf(f.work) {
		if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); err == nil && strings.Contains(string(b), "ansible-connection") {
			daemons++
		}
	}
	if daemons == 0 {
		t.Fatal("no ansible-connection daemon was found while the push hung: the sweep below would prove nothing")
	}
	cancel()
	res := <-done
	if res[cliPorts["eos"][0]] == nil {
		t.Fatal("a cancelled run reported success")
	}
	if left := processesOf(f.work); len(left) > 0 {
		t.Fatalf("processes of the cancelled run are left: %v", left)
	}
}

func vlanIDs(first, last int) []int {
	var out []int
	for id := first; id <= last; id++ {
		out = append(out, id)
	}
	return out
}

func hung(f *fakeswitch.Switch) bool {
	for _, c := range f.Commands() {
		if strings.HasPrefix(c, "configure session") {
			return true
		}
	}
	return false
}

// Issue 27, defect 4: a login that may configure but not save failed the whole run, every
// port with it, while the switch ran the change. Now the ports report ErrNotSaved, and the
// switch does run the change.
func TestCLINotSaved(t *testing.T) {
	f := newCLIFixtureOf(t, fakeswitch.Options{OS: "eos", User: "admin", Password: "s3cret{{ x }}", Ports: cliPorts["eos"], RefuseSave: true})
	fake := f.fake
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ports := cliPorts["eos"]
	res := f.driver().Apply(ctx, []switchdriver.Change{
		{Port: ports[0], Config: &networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: vid(60)}},
		{Port: ports[1], Config: &networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "70-71"}, Parking: 4000},
	})
	for _, p := range ports[:2] {
		if !errors.Is(res[p], switchdriver.ErrNotSaved) {
			t.Errorf("port %s: got %v, want ErrNotSaved", p, res[p])
		}
	}
	if got := fake.PortState(ports[0]); got.Untagged != 60 {
		t.Errorf("port %s carries untagged %d: the switch should run the change it could not save", ports[0], got.Untagged)
	}
	if !fake.Unsaved() {
		t.Error("the fake switch saved although it refuses saves")
	}
}
