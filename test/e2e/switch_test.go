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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/devenv"
	"github.com/rackwire/rackwire/internal/fakeswitch"
	"github.com/rackwire/rackwire/internal/switchlab"
)

// The manager binary drives the lab's Open vSwitch over SSH with the Ansible driver, and
// every outcome is checked on the switch itself with ovs-vsctl.
var _ = Describe("switch ports on a real switch", Ordered, func() {
	const ns = "default"
	var (
		ctx  = context.Background()
		lab  *switchlab.Lab
		env  *devenv.Env
		k8s  client.Client
		work string
	)

	BeforeAll(func() {
		var err error
		lab, err = switchlab.Start(root, 32)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(lab.Stop)
		work = GinkgoT().TempDir()
		env, err = devenv.Start(ctx, devenv.Options{
			Root: root, Dir: GinkgoT().TempDir(), Manager: manager, Log: GinkgoWriter,
			ManagerArgs: []string{
				"--ansible-work-dir=" + work,
				"--switch-drift-interval=5s",
				// Longer than the run limit, so the hung switch is stopped by the limit.
				"--switch-connect-timeout=300s",
				// One port's run may take 40s, 24 ports' 160s on a busy machine.
				"--switch-run-timeout=30s",
				"--switch-run-timeout-per-port=6s",
			},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		k8s = env.Client
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "2-200"},
		})).To(Succeed())
	})

	AfterEach(func() {
		if !CurrentSpecReport().Failed() || env == nil {
			return
		}
		b, _ := os.ReadFile(env.ManagerLog)
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "playbook run") || strings.Contains(l, "ERROR") {
				lines = append(lines, l)
			}
		}
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		AddReportEntry("manager log (playbook runs and errors)", strings.Join(lines, "\n"))
	})

	// newSwitch makes a Switch of the given lab ports, logging in with the password. Each
	// Switch stands for its own device, so each takes its own address of the lab.
	newSwitch := func(name, host string, port int32, password string, ports ...string) {
		for _, o := range lab.Objects(ns, name, host, port, password, ports...) {
			ExpectWithOffset(1, k8s.Create(ctx, o)).To(Succeed())
		}
	}
	newConfig := func(name string, untagged int32, vlans string) *networkv1alpha1.SwitchPortConfiguration {
		c := &networkv1alpha1.SwitchPortConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: networkv1alpha1.SwitchPortConfigurationSpec{VLANs: networkv1alpha1.VLANRange(vlans)}}
		if untagged > 0 {
			c.Spec.UntaggedVLAN = ptr.To(networkv1alpha1.VLANID(untagged))
		}
		ExpectWithOffset(1, k8s.Create(ctx, c)).To(Succeed())
		return c
	}
	link := func(port, cfg string) {
		p := &networkv1alpha1.SwitchPort{}
		EventuallyWithOffset(1, func() error { return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: port}, p) }).Should(Succeed())
		base := p.DeepCopy()
		p.Spec.Configuration = nil
		if cfg != "" {
			p.Spec.Configuration = &networkv1alpha1.ConfigurationRef{Name: cfg}
		}
		ExpectWithOffset(1, k8s.Patch(ctx, p, client.MergeFrom(base))).To(Succeed())
	}
	state := func(port string) func() networkv1alpha1.SwitchPortState {
		return func() networkv1alpha1.SwitchPortState {
			p := &networkv1alpha1.SwitchPort{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: port}, p); err != nil {
				return networkv1alpha1.SwitchPortState(err.Error())
			}
			return p.Status.State
		}
	}
	condition := func(port string) func() string {
		return func() string {
			p := &networkv1alpha1.SwitchPort{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: port}, p); err != nil {
				return err.Error()
			}
			if c := meta.FindStatusCondition(p.Status.Conditions, networkv1alpha1.ConditionReady); c != nil {
				return c.Reason + ": " + c.Message
			}
			return ""
		}
	}
	onSwitch := func(table, record, column string) func() string {
		return func() string {
			v, err := lab.Get(table, record, column)
			if err != nil {
				return err.Error()
			}
			return v
		}
	}
	events := func(name string) func() []string {
		return func() []string {
			list := &eventsv1.EventList{}
			if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
				return []string{err.Error()}
			}
			var out []string
			for _, e := range list.Items {
				if e.Regarding.Name == name {
					out = append(out, e.Reason+": "+e.Note)
				}
			}
			return out
		}
	}
	applyRuns := func(name string) []switchlab.Run {
		runs, err := switchlab.ApplyRuns(env.ManagerLog, ns+"/"+name)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		return runs
	}
	const slow = 3 * time.Minute

	It("configures, edits, re-links and cleans a port, in place on the switch", func() {
		newSwitch("leaf1", lab.Hosts[0], lab.Port, lab.Password, "p0", "p1")
		Eventually(func() string {
			sw := &networkv1alpha1.Switch{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "leaf1"}, sw); err != nil {
				return err.Error()
			}
			if c := meta.FindStatusCondition(sw.Status.Conditions, networkv1alpha1.ConditionReady); c != nil {
				return c.Reason
			}
			return ""
		}, slow).Should(Equal("Ready"))

		access := newConfig("access-10", 10, "")
		newConfig("trunk", 5, "20-22")
		By("linking an access configuration")
		link("leaf1-p0", "access-10")
		Eventually(state("leaf1-p0"), slow).Should(Equal(networkv1alpha1.StateActive))
		Expect(lab.Get("Port", "p0", "tag")).To(Equal("10"))
		Expect(lab.Get("Port", "p0", "vlan_mode")).To(Equal("access"))

		By("editing it: refused while linked; a new configuration is linked in its place")
		base := access.DeepCopy()
		access.Spec.UntaggedVLAN = ptr.To(networkv1alpha1.VLANID(11))
		Expect(k8s.Patch(ctx, access, client.MergeFrom(base))).To(MatchError(ContainSubstring("create a new SwitchPortConfiguration and link it")))
		newConfig("access-11", 11, "")
		link("leaf1-p0", "access-11")
		Eventually(onSwitch("Port", "p0", "tag"), slow).Should(Equal("11"))
		Eventually(state("leaf1-p0"), slow).Should(Equal(networkv1alpha1.StateActive))

		By("linking a trunk configuration instead")
		link("leaf1-p0", "trunk")
		Eventually(onSwitch("Port", "p0", "trunks"), slow).Should(Equal("[20, 21, 22]"))
		Expect(lab.Get("Port", "p0", "tag")).To(Equal("5"))
		Expect(lab.Get("Port", "p0", "vlan_mode")).To(Equal("native-untagged"))
		Eventually(state("leaf1-p0"), slow).Should(Equal(networkv1alpha1.StateActive))

		By("unlinking it: parked, up, on the bridge")
		link("leaf1-p0", "")
		Eventually(state("leaf1-p0"), slow).Should(Equal(networkv1alpha1.StateIdle))
		for col, want := range map[string]string{"tag": strconv.Itoa(switchlab.ParkingVLAN), "trunks": "[]", "vlan_mode": "access"} {
			Expect(lab.Get("Port", "p0", col)).To(Equal(want), col)
		}
		Expect(lab.Get("Interface", "p0", "admin_state")).To(Equal("up"))
		Expect(lab.Vsctl("port-to-br", "p0")).To(Equal(lab.Bridge), "the cleaned port stays on the bridge")
		Expect(lab.Get("Port", "p1", "tag")).To(Equal(strconv.Itoa(switchlab.ParkingVLAN)), "a port never linked is parked too")
	})

	It("repairs a tag changed by hand on the switch and says so", func() {
		newConfig("access-30", 30, "")
		link("leaf1-p1", "access-30")
		Eventually(state("leaf1-p1"), slow).Should(Equal(networkv1alpha1.StateActive))
		_, err := lab.Vsctl("set", "Port", "p1", "tag=31")
		Expect(err).NotTo(HaveOccurred())
		Eventually(events("leaf1-p1"), slow).Should(ContainElement(HavePrefix("Drift: port p1 differs on the switch")))
		Eventually(onSwitch("Port", "p1", "tag"), slow).Should(Equal("30"))
		Eventually(state("leaf1-p1"), slow).Should(Equal(networkv1alpha1.StateActive))
	})

	It("reports a wrong password by its cause, shows it nowhere, and keeps the switch's address and login from tenants", func() {
		const wrong = "Wr0ng-Pa55word-e2e"
		newSwitch("badpass", lab.Hosts[1], lab.Port, wrong, "p2")
		newConfig("access-40", 40, "")
		link("badpass-p2", "access-40")
		Eventually(condition("badpass-p2"), slow).Should(HavePrefix("AuthenticationFailed: "))
		Expect(state("badpass-p2")()).To(Equal(networkv1alpha1.StateCleaning), "never clean, so never Idle")
		Expect(lab.Get("Port", "p2", "tag")).To(Equal("[]"))

		By("a wrong host key: the switch is not the one the infra team pinned")
		wrongKey := lab.Objects(ns, "wrongkey", lab.Hosts[3], lab.Port, lab.Password, "p4")
		wrongKey[1].(*networkv1alpha1.AnsibleSwitch).Spec.HostKeys = []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK0wmN/Cr3JXqmLW7u+g9pTh+wyqDHpSQEIQczXkVx9q"}
		for _, o := range wrongKey {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(condition("wrongkey-p4"), slow).Should(Or(HavePrefix("SwitchUnreachable: "), HavePrefix("CleanFailed: ")))

		By("the tenant's view names the reason, not the switch's address or login")
		for _, p := range []string{"badpass-p2", "wrongkey-p4"} {
			sp := &networkv1alpha1.SwitchPort{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: p}, sp)).To(Succeed())
			b, err := json.Marshal(sp.Status)
			Expect(err).NotTo(HaveOccurred())
			tenantView := append([]string{string(b)}, events(p)()...)
			for _, s := range tenantView {
				for _, secret := range append([]string{lab.User}, lab.Hosts...) {
					Expect(s).NotTo(ContainSubstring(secret), p)
				}
			}
		}
		Eventually(events("badpass"), slow).Should(ContainElement(HavePrefix("AuthenticationFailed: SwitchPort default/badpass-p2")), "the infra team gets the switch's own message")

		var seen []string
		log, err := os.ReadFile(env.ManagerLog)
		Expect(err).NotTo(HaveOccurred())
		seen = append(seen, string(log))
		list := &eventsv1.EventList{}
		Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, e := range list.Items {
			seen = append(seen, e.Note)
		}
		for _, obj := range []client.ObjectList{&networkv1alpha1.SwitchPortList{}, &networkv1alpha1.SwitchList{}, &networkv1alpha1.AnsibleSwitchList{}} {
			Expect(k8s.List(ctx, obj, client.InNamespace(ns))).To(Succeed())
			b, err := json.Marshal(obj)
			Expect(err).NotTo(HaveOccurred())
			seen = append(seen, string(b))
		}
		for _, s := range seen {
			Expect(s).NotTo(ContainSubstring(wrong))
			Expect(s).NotTo(ContainSubstring(lab.Password))
		}
		Expect(staleRuns(work, 3*time.Minute)).To(BeEmpty(), "no inventory outlives its run (at most 30s+32*6s)")
	})

	It("runs the manager with no right to list or watch Secrets", func() {
		kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
		for verb, want := range map[string]string{"list": "no", "watch": "no", "get": "yes"} {
			out, _ := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "auth", "can-i", verb, "secrets", "-n", "kube-system", "--as", "rackwire-manager").Output()
			Expect(strings.TrimSpace(string(out))).To(Equal(want), "can-i %s secrets", verb)
		}
	})

	It("stops a run on a hung switch at its limit and leaves no process behind", func() {
		hung, err := switchlab.StartHungSwitch()
		Expect(err).NotTo(HaveOccurred())
		defer hung.Close()
		newSwitch("hung", lab.Host, hung.Port(), lab.Password, "p3")
		newConfig("access-50", 50, "")
		link("hung-p3", "access-50")
		Eventually(condition("hung-p3"), slow).Should(HavePrefix("TimedOut: "))
		// The switch comes back as refusing connections, so later retries end at once.
		hung.Close()
		marker := "Port=" + strconv.Itoa(int(hung.Port()))
		Eventually(func() []string { return processesWith(marker) }, time.Minute).Should(BeEmpty())
	})

	It("drives a network_cli switch (a fake Arista EOS over SSH) with its enable secret: Ready, parked, then Active", func() {
		eos, err := fakeswitch.Start(fakeswitch.Options{OS: "eos", User: "admin", Password: "pw", Enable: "en", Ports: []string{"Ethernet1", "Ethernet2"}})
		Expect(err).NotTo(HaveOccurred())
		defer eos.Close()
		om := metav1.ObjectMeta{Namespace: ns, Name: "arista"}
		parking := networkv1alpha1.VLANID(switchlab.ParkingVLAN)
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: om, StringData: map[string]string{"username": "admin", "password": "pw", "enableSecret": "en"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: om, Spec: networkv1alpha1.AnsibleSwitchSpec{
				OS: "eos", IP: eos.Host, Port: eos.Port, HostKeys: []string{eos.HostKey}, CredentialsSecret: networkv1alpha1.SecretRef{Name: "arista"},
			}},
			&networkv1alpha1.Switch{ObjectMeta: om, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "arista"},
				Ports:    map[string]networkv1alpha1.PortInfo{"arista-e1": {Name: "Ethernet1"}},
				Clean:    networkv1alpha1.CleanPolicy{ParkingVLAN: &parking},
			}},
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(func() string {
			sw := &networkv1alpha1.Switch{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(&networkv1alpha1.Switch{ObjectMeta: om}), sw); err != nil {
				return err.Error()
			}
			if c := meta.FindStatusCondition(sw.Status.Conditions, networkv1alpha1.ConditionReady); c != nil {
				return string(c.Status) + " " + c.Reason + ": " + c.Message
			}
			return ""
		}, slow).Should(HavePrefix("True"))
		Eventually(state("arista-e1"), slow).Should(Equal(networkv1alpha1.StateIdle))
		newConfig("access-70", 70, "")
		link("arista-e1", "access-70")
		Eventually(state("arista-e1"), slow).Should(Equal(networkv1alpha1.StateActive))
		got := strings.Join(eos.Commands(), "\n")
		Expect(got).To(ContainSubstring("<enable secret>"))
		Expect(got).To(ContainSubstring("interface Ethernet1\ndescription managed by rackwire\nswitchport\nswitchport mode access\nswitchport access vlan 4000"))
		Expect(got).To(ContainSubstring("switchport access vlan 70"))
		Expect(got).To(ContainSubstring("write memory"))
		Expect(got).NotTo(ContainSubstring("Ethernet2"), "only the ports of the Switch are touched")
	})

	It("links 24 ports at once in a few playbook runs", func() {
		var ports []string
		for i := 8; i < 32; i++ {
			ports = append(ports, fmt.Sprintf("p%d", i))
		}
		newSwitch("leaf2", lab.Hosts[2], lab.Port, lab.Password, ports...)
		newConfig("access-60", 60, "")
		for _, p := range ports {
			Eventually(state("leaf2-"+p), slow).Should(Equal(networkv1alpha1.StateIdle), p)
		}
		before := applyRuns("leaf2")
		for _, p := range ports {
			link("leaf2-"+p, "access-60")
		}
		for _, p := range ports {
			Eventually(state("leaf2-"+p), slow).Should(Equal(networkv1alpha1.StateActive), p)
			Expect(lab.Get("Port", p, "tag")).To(Equal("60"), p)
		}
		runs := applyRuns("leaf2")[len(before):]
		GinkgoWriter.Printf("24 ports took %d apply runs: %+v\n", len(runs), runs)
		Expect(len(runs)).To(BeNumerically("<=", 3))
		for _, r := range runs {
			Expect(r.Tasks).To(Equal(2), "an Open vSwitch run costs two tasks whatever its ports: %+v", r)
		}
	})
})

// staleRuns lists the run directories (each with its inventory) older than age: other
// switches' runs may be in flight, but none lives past the run limit.
func staleRuns(work string, age time.Duration) []string {
	entries, err := os.ReadDir(work)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > age {
			out = append(out, e.Name())
		}
	}
	return out
}

// processesWith lists the command lines that contain the marker.
func processesWith(marker string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), marker) {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}
