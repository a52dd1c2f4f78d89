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
	"fmt"
	"strings"
	"sync"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/hostlink"
	"github.com/rackwire/rackwire/internal/devenv"
	"github.com/rackwire/rackwire/internal/switchlab"
)

// The real Bare Metal Operator in test mode walks hosts through its states; the manager
// binary moves their ports on the lab's Open vSwitch, and every step is checked there.
var _ = Describe("bare-metal hosts drive their switch ports, with the real BMO", Ordered, func() {
	const (
		infra = "metal3"
		nic1  = "ab:cd:12:34:56:78" // the MACs, names and LLDP neighbours BMO's fixture reports
		nic2  = "12:34:56:78:ab:cd"
		slow  = 3 * time.Minute
	)
	var (
		ctx = context.Background()
		lab *switchlab.Lab
		env *devenv.Env
		k8s client.Client
		op  *bmo
	)

	BeforeAll(func() {
		var err error
		lab, err = switchlab.Start(root, 4)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(lab.Stop)
		env, err = devenv.Start(ctx, devenv.Options{
			Root: root, Dir: GinkgoT().TempDir(), Manager: manager, Log: GinkgoWriter,
			ManagerArgs: []string{"--ansible-work-dir=" + GinkgoT().TempDir(), "--switch-drift-interval=30s",
				"--switch-run-timeout=60s", "--switch-run-timeout-per-port=6s"},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		k8s = env.Client
		// CAPM3 consumes hosts of its own namespace: the hosts, their Metal3Machines and the
		// tenant's configurations share one (BMO here watches only that one).
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: infra}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "100-300"},
		})).To(Succeed())
		for _, c := range []*networkv1alpha1.SwitchPortConfiguration{
			{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "prov"}, Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptr.To(networkv1alpha1.VLANID(100))}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "web"}, Spec: networkv1alpha1.SwitchPortConfigurationSpec{UntaggedVLAN: ptr.To(networkv1alpha1.VLANID(201))}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "storage"}, Spec: networkv1alpha1.SwitchPortConfigurationSpec{VLANs: "210-212"}},
		} {
			Expect(k8s.Create(ctx, c)).To(Succeed())
		}
		for _, o := range lab.Objects(infra, "rack1", lab.Hosts[0], lab.Port, lab.Password, "p0", "p1") {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		op, err = startBMO(root, env.Kubeconfig, infra, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(op.Stop)
	})

	AfterEach(func() {
		if CurrentSpecReport().Failed() && op != nil {
			AddReportEntry("BMO log", op.tail(40))
		}
	})

	tag := func(port string) func() string {
		return func() string {
			v, err := lab.Get("Port", port, "tag")
			if err != nil {
				return err.Error()
			}
			return v
		}
	}
	trunks := func(port string) func() string {
		return func() string {
			v, err := lab.Get("Port", port, "trunks")
			if err != nil {
				return err.Error()
			}
			return v
		}
	}
	getHost := func(name string) *metal3v1alpha1.BareMetalHost {
		h := &metal3v1alpha1.BareMetalHost{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: name}, h); err != nil {
			return nil
		}
		return h
	}
	hostState := func(name string) func() string {
		return func() string {
			if h := getHost(name); h != nil {
				return string(h.Status.Provisioning.State)
			}
			return "gone"
		}
	}
	linkStatus := func(name string) func() string {
		return func() string {
			l := &networkv1alpha1.HostLink{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: name}, l); err != nil {
				return err.Error()
			}
			ready := ""
			if c := meta.FindStatusCondition(l.Status.Conditions, networkv1alpha1.ConditionReady); c != nil {
				ready = c.Reason
			}
			return fmt.Sprintf("%s %s %s held=%v", l.Status.Network, l.Status.ReadyPorts, ready, l.Status.Held)
		}
	}
	newHost := func(name string) *metal3v1alpha1.BareMetalHost {
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: name + "-bmc"},
			StringData: map[string]string{"username": "admin", "password": "secret"}})).To(Succeed())
		h := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: name},
			Spec: metal3v1alpha1.BareMetalHostSpec{Online: true, BootMACAddress: nic1,
				BMC: metal3v1alpha1.BMCDetails{Address: "ipmi://127.0.0.1:6230", CredentialsName: name + "-bmc"}}}
		Expect(k8s.Create(ctx, h)).To(Succeed())
		return h
	}
	// machine is a Metal3Machine as CAPM3 leaves it once it chose its host: naming it back.
	machine := func(name, host, annotation string) {
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(hostlink.Metal3MachineGVK)
		m.SetNamespace(infra)
		m.SetName(name)
		m.SetAnnotations(map[string]string{networkv1alpha1.AnnotationNetworkConfiguration: annotation,
			networkv1alpha1.AnnotationConsumerHost: infra + "/" + host})
		ExpectWithOffset(1, k8s.Create(ctx, m)).To(Succeed())
	}
	provision := func(name, m3m string) {
		h := getHost(name)
		base := h.DeepCopy()
		h.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: hostlink.Metal3MachineGVK.GroupVersion().String(), Kind: "Metal3Machine", Namespace: infra, Name: m3m}
		h.Spec.Image = &metal3v1alpha1.Image{URL: "http://127.0.0.1/image.qcow2", Checksum: "http://127.0.0.1/image.qcow2.sha256sum", DiskFormat: ptr.To("qcow2")}
		ExpectWithOffset(1, k8s.Patch(ctx, h, client.MergeFrom(base))).To(Succeed())
	}
	// watchHost records every moment BMO could act on the host (not paused, in a state that
	// boots the ramdisk) while a port did not carry the provisioning VLAN.
	watchHost := func(name string, ports ...string) (stop func() []string) {
		var mu sync.Mutex
		var bad []string
		done, sampled := make(chan struct{}), make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(sampled)
			for {
				select {
				case <-done:
					return
				case <-time.After(200 * time.Millisecond):
				}
				h := getHost(name)
				if h == nil {
					continue
				}
				s := h.Status.Provisioning.State
				_, paused := h.Annotations[metal3v1alpha1.PausedAnnotation]
				if paused || (s != metal3v1alpha1.StateInspecting && s != metal3v1alpha1.StateProvisioning && s != metal3v1alpha1.StateDeprovisioning) {
					continue
				}
				for _, p := range ports {
					if t := tag(p)(); t != "100" {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("%s while %s: port %s has tag %q", time.Now().Format(time.RFC3339Nano), s, p, t))
						mu.Unlock()
					}
				}
			}
		}()
		return func() []string {
			close(done)
			mu.Lock()
			defer mu.Unlock()
			return bad
		}
	}

	It("keeps a host on the provisioning network while BMO boots its ramdisk, and on its tenant's networks once provisioned", func() {
		Eventually(tag("p0"), slow).Should(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
		Eventually(tag("p1"), slow).Should(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
		Expect(k8s.Create(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "host1"},
			Spec: networkv1alpha1.HostLinkSpec{Ports: []networkv1alpha1.HostPort{
				{MAC: nic1, Port: networkv1alpha1.ObjectRef{Name: "rack1-p0"}, ProvisioningConfiguration: &networkv1alpha1.ObjectRef{Name: "prov"}},
				{MAC: nic2, Port: networkv1alpha1.ObjectRef{Name: "rack1-p1"}, ProvisioningConfiguration: &networkv1alpha1.ObjectRef{Name: "prov"}},
			}}})).To(Succeed())
		machine("m1", "host1", `[{"configurationRef":{"name":"web"},"nicHint":{"name":"nic-1"}},{"configurationRef":{"name":"storage"},"nicHint":{"name":"nic-2"}}]`)
		stop := watchHost("host1", "p0", "p1")

		By("creating the host: held from its first write until its ports are on the provisioning VLAN")
		h := newHost("host1")
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))
		Eventually(tag("p0"), slow).Should(Equal("100"))
		Eventually(tag("p1"), slow).Should(Equal("100"))
		Eventually(hostState("host1"), slow).Should(Equal(string(metal3v1alpha1.StateAvailable)))
		Eventually(linkStatus("host1"), slow).Should(Equal("provisioning 2/2 PortsReady held=false"))

		By("provisioning it for the tenant's Metal3Machine: its ports move to the tenant's configurations")
		provision("host1", "m1")
		Eventually(hostState("host1"), slow).Should(Equal(string(metal3v1alpha1.StateProvisioned)))
		Eventually(linkStatus("host1"), slow).Should(Equal("tenant 2/2 PortsReady held=false"))
		Expect(tag("p0")()).To(Equal("201"))
		Expect(lab.Get("Port", "p0", "vlan_mode")).To(Equal("access"))
		Expect(trunks("p1")()).To(Equal("[210, 211, 212]"))
		p := &networkv1alpha1.SwitchPort{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "rack1-p1"}, p)).To(Succeed())
		Expect(p.Spec.Configuration).To(Equal(&networkv1alpha1.ConfigurationRef{Name: "storage", Namespace: infra}))
		Eventually(func() string {
			l := &networkv1alpha1.SwitchResourceLimit{}
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: networkv1alpha1.SwitchResourceLimitName}, l)
			return l.Status.UsedVLANs
		}, slow).Should(ContainSubstring("201, 210-212"))

		By("taking the image away: held in that same write, back on provisioning before BMO deprovisions")
		h = getHost("host1")
		base := h.DeepCopy()
		h.Spec.Image = nil
		Expect(k8s.Patch(ctx, h, client.MergeFrom(base))).To(Succeed())
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))
		Eventually(tag("p0"), slow).Should(Equal("100"))
		Eventually(tag("p1"), slow).Should(Equal("100"))
		Eventually(hostState("host1"), slow).Should(Equal(string(metal3v1alpha1.StateAvailable)))

		By("deleting the host: it goes once its ports are clean")
		Expect(k8s.Delete(ctx, getHost("host1"))).To(Succeed())
		Eventually(hostState("host1"), slow).Should(Equal("gone"))
		Expect(tag("p0")()).To(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
		Expect(tag("p1")()).To(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
		Expect(stop()).To(BeEmpty())
	})

	It("wires an inspected host by LLDP and gives it its consumer's configuration", func() {
		// The fixture's first NIC sees chassis aa:bb:cc:dd:ee:ff, port Ethernet1/1.
		_, err := lab.Vsctl("--may-exist", "add-port", lab.Bridge, "Ethernet1/1", "--", "set", "Interface", "Ethernet1/1", "type=dummy")
		Expect(err).NotTo(HaveOccurred())
		objs := lab.Objects(infra, "rack2", lab.Hosts[1], lab.Port, lab.Password)
		sw := objs[2].(*networkv1alpha1.Switch)
		sw.Spec.ChassisMAC = "AA-BB-CC-DD-EE-FF"
		sw.Spec.Ports = map[string]networkv1alpha1.PortInfo{"rack2-eth1": {Name: "Ethernet1/1"}}
		// The infra team vouches for LLDP of its own namespace's hosts on this Switch.
		sw.Spec.DiscoveryNamespaces = []string{infra}
		for _, o := range objs {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(tag("Ethernet1/1"), slow).Should(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
		machine("m2", "host2", `[{"configurationRef":{"name":"web"},"nicHint":{"mac":"`+nic1+`"}}]`)

		newHost("host2")
		Eventually(hostState("host2"), slow).Should(Equal(string(metal3v1alpha1.StateAvailable)))
		Eventually(func() []networkv1alpha1.HostPortStatus {
			l := &networkv1alpha1.HostLink{}
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "host2"}, l)
			return l.Status.Ports
		}, slow).Should(ConsistOf(HaveField("Source", networkv1alpha1.WiringLLDP)))

		provision("host2", "m2")
		Eventually(hostState("host2"), slow).Should(Equal(string(metal3v1alpha1.StateProvisioned)))
		Eventually(linkStatus("host2"), slow).Should(Equal("tenant 1/1 PortsReady held=false"))
		Expect(tag("Ethernet1/1")()).To(Equal("201"))

		Expect(k8s.Delete(ctx, getHost("host2"))).To(Succeed())
		Eventually(hostState("host2"), slow).Should(Equal("gone"))
		Expect(tag("Ethernet1/1")()).To(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
	})

	It("lets one host hold a port two hosts' LLDP names: the port keeps the first host's VLAN, the second host is held", func() {
		machine("m5", "host5", `[{"configurationRef":{"name":"web"},"nicHint":{"mac":"`+nic1+`"}}]`)
		newHost("host5")
		Eventually(hostState("host5"), slow).Should(Equal(string(metal3v1alpha1.StateAvailable)))
		provision("host5", "m5")
		Eventually(hostState("host5"), slow).Should(Equal(string(metal3v1alpha1.StateProvisioned)))
		Eventually(linkStatus("host5"), slow).Should(Equal("tenant 1/1 PortsReady held=false"))
		Expect(tag("Ethernet1/1")()).To(Equal("201"))

		By("a second host whose inspection sees the same LLDP neighbour: the port's tag never leaves the first host's VLAN")
		var mu sync.Mutex
		var samples []string
		done, sampled := make(chan struct{}), make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(sampled)
			for {
				select {
				case <-done:
					return
				case <-time.After(200 * time.Millisecond):
				}
				t := tag("Ethernet1/1")()
				mu.Lock()
				samples = append(samples, t)
				mu.Unlock()
			}
		}()
		newHost("host6")
		held6 := func() string {
			l := &networkv1alpha1.HostLink{}
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "host6"}, l)
			if c := meta.FindStatusCondition(l.Status.Conditions, hostlink.ConditionHeld); c != nil {
				return c.Reason + ": " + c.Message
			}
			return ""
		}
		Eventually(held6, slow).Should(And(HavePrefix(hostlink.ReasonPortTaken), ContainSubstring("SwitchPort metal3/rack2-eth1 is held by host metal3/host5")))
		Expect(getHost("host6").Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))
		Eventually(func() []string {
			list := &eventsv1.EventList{}
			_ = k8s.List(ctx, list, client.InNamespace(infra))
			var out []string
			for _, e := range list.Items {
				if e.Regarding.Kind == "BareMetalHost" && e.Regarding.Name == "host5" {
					out = append(out, e.Reason+": "+e.Note)
				}
			}
			return out
		}, slow).Should(ContainElement(And(HavePrefix(hostlink.ReasonPortTaken), ContainSubstring("metal3/host6"), ContainSubstring("metal3/rack2-eth1"))))
		close(done)
		<-sampled
		// The hold can be reached within one sampling period; the port is looked at once
		// more now that host6 is held, so that there is always a look after the hold.
		mu.Lock()
		samples = append(samples, tag("Ethernet1/1")())
		Expect(samples).To(HaveEach(Equal("201")))
		mu.Unlock()
		Expect(hostState("host5")()).To(Equal(string(metal3v1alpha1.StateProvisioned)))

		By("both hosts deleted: the first cleans the port, the second then gets it, and both go")
		Expect(k8s.Delete(ctx, getHost("host5"))).To(Succeed())
		Expect(k8s.Delete(ctx, getHost("host6"))).To(Succeed())
		Eventually(hostState("host5"), slow).Should(Equal("gone"))
		Eventually(hostState("host6"), slow).Should(Equal("gone"))
		Expect(tag("Ethernet1/1")()).To(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
	})

	It("holds a host whose port failed, says which and why, and lets it go when asked", func() {
		// A SwitchPort is named by one HostLink: host1's goes first, with host1.
		Expect(k8s.Delete(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "host1"}})).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "host1"}, &networkv1alpha1.HostLink{}))
		}, slow).Should(BeTrue())
		Expect(k8s.Create(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "host3"},
			Spec: networkv1alpha1.HostLinkSpec{Ports: []networkv1alpha1.HostPort{
				{MAC: nic1, Port: networkv1alpha1.ObjectRef{Name: "rack1-p0"}, ProvisioningConfiguration: &networkv1alpha1.ObjectRef{Name: "missing"}},
			}}})).To(Succeed())
		newHost("host3")
		Eventually(func() string {
			l := &networkv1alpha1.HostLink{}
			_ = k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "host3"}, l)
			if c := meta.FindStatusCondition(l.Status.Conditions, hostlink.ConditionHeld); c != nil {
				return c.Reason + ": " + c.Message
			}
			return ""
		}, slow).Should(And(HavePrefix(hostlink.ReasonPortFailed), ContainSubstring("rack1-p0"), ContainSubstring("missing"), ContainSubstring(networkv1alpha1.AnnotationReleaseHost)))
		Expect(hostState("host3")()).NotTo(Equal(string(metal3v1alpha1.StateAvailable)))
		Expect(getHost("host3").Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))

		l := &networkv1alpha1.HostLink{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "host3"}, l)).To(Succeed())
		base := l.DeepCopy()
		l.Annotations = map[string]string{networkv1alpha1.AnnotationReleaseHost: "true"}
		Expect(k8s.Patch(ctx, l, client.MergeFrom(base))).To(Succeed())
		Eventually(hostState("host3"), slow).Should(Equal(string(metal3v1alpha1.StateAvailable)))

		Expect(k8s.Delete(ctx, getHost("host3"))).To(Succeed())
		Eventually(func() bool {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "host3"}, &metal3v1alpha1.BareMetalHost{})
			return apierrors.IsNotFound(err)
		}, slow).Should(BeTrue())
		Expect(strings.TrimSpace(tag("p0")())).To(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
	})

	It("keeps its hold while the consumer is paused for a move, and the held host keeps its status for the target's BMO", func() {
		// host1's HostLink went with host1: rack1-p1 is free.
		Expect(k8s.Create(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "host7"},
			Spec: networkv1alpha1.HostLinkSpec{Ports: []networkv1alpha1.HostPort{
				{MAC: nic1, Port: networkv1alpha1.ObjectRef{Name: "rack1-p1"}, ProvisioningConfiguration: &networkv1alpha1.ObjectRef{Name: "prov"}},
			}}})).To(Succeed())
		machine("m7", "host7", `[{"configurationRef":{"name":"web"},"nicHint":{"mac":"`+nic1+`"}}]`)
		newHost("host7")
		Eventually(hostState("host7"), slow).Should(Equal(string(metal3v1alpha1.StateAvailable)))
		provision("host7", "m7")
		Eventually(hostState("host7"), slow).Should(Equal(string(metal3v1alpha1.StateProvisioned)))
		Eventually(linkStatus("host7"), slow).Should(Equal("tenant 1/1 PortsReady held=false"))
		Expect(tag("p1")()).To(Equal("201"))

		By("its way back to provisioning fails: the scale-down is held")
		setProvisioning := func(name string) {
			l := &networkv1alpha1.HostLink{}
			ExpectWithOffset(1, k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "host7"}, l)).To(Succeed())
			base := l.DeepCopy()
			l.Spec.Ports[0].ProvisioningConfiguration.Name = name
			ExpectWithOffset(1, k8s.Patch(ctx, l, client.MergeFrom(base))).To(Succeed())
		}
		setProvisioning("missing")
		h := getHost("host7")
		base := h.DeepCopy()
		h.Spec.Image = nil
		Expect(k8s.Patch(ctx, h, client.MergeFrom(base))).To(Succeed())
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))
		Eventually(linkStatus("host7"), slow).Should(Equal("provisioning 0/1 PortFailed held=true"))

		By("CAPM3's pause step finds the host already paused and does nothing; rackwire keeps the status in BMO's annotation")
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(hostlink.Metal3MachineGVK)
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "m7"}, m)).To(Succeed())
		ann := m.GetAnnotations()
		ann["cluster.x-k8s.io/paused"] = ""
		m.SetAnnotations(ann)
		Expect(k8s.Update(ctx, m)).To(Succeed())
		Eventually(func() string { return getHost("host7").Annotations[metal3v1alpha1.StatusAnnotation] }, slow).Should(ContainSubstring(`"state":"provisioned"`))
		status := getHost("host7").Annotations[metal3v1alpha1.StatusAnnotation]

		By("the port reaches the provisioning VLAN mid-move: the hold stays until the consumer is unpaused")
		setProvisioning("prov")
		Eventually(tag("p1"), slow).Should(Equal("100"))
		Eventually(linkStatus("host7"), slow).Should(Equal("provisioning 1/1 PortsReady held=true"))
		Expect(hostState("host7")()).To(Equal(string(metal3v1alpha1.StateProvisioned)))

		By("the target's copy, as clusterctl moves it (annotations, no status): BMO restores the status instead of inspecting again")
		moved := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "host7-moved",
			Annotations: map[string]string{metal3v1alpha1.StatusAnnotation: status}},
			Spec: *getHost("host7").Spec.DeepCopy()}
		moved.Spec.ConsumerRef = nil
		moved.Spec.BMC.CredentialsName = "host7-bmc"
		Expect(k8s.Create(ctx, moved)).To(Succeed())
		Eventually(func() string {
			h := getHost("host7-moved")
			if h == nil || h.Status.HardwareDetails == nil {
				return ""
			}
			return h.Status.Provisioning.Image.URL
		}, slow).Should(Equal("http://127.0.0.1/image.qcow2"))
		Expect(k8s.Delete(ctx, getHost("host7-moved"))).To(Succeed())

		By("the consumer unpaused: rackwire lifts its hold and BMO deprovisions on the provisioning VLAN")
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "m7"}, m)).To(Succeed())
		ann = m.GetAnnotations()
		delete(ann, "cluster.x-k8s.io/paused")
		m.SetAnnotations(ann)
		Expect(k8s.Update(ctx, m)).To(Succeed())
		Eventually(hostState("host7"), slow).Should(Equal(string(metal3v1alpha1.StateAvailable)))
		Expect(k8s.Delete(ctx, getHost("host7"))).To(Succeed())
		Eventually(hostState("host7"), slow).Should(Equal("gone"))
		Eventually(hostState("host7-moved"), slow).Should(Equal("gone"))
		Expect(k8s.Delete(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "host7"}})).To(Succeed())
		Expect(tag("p1")()).To(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
		// The HostLink holds rack1-p1 until its finalizer has released it: the next spec wires
		// the port to another host.
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: infra, Name: "host7"}, &networkv1alpha1.HostLink{})
		}, slow).Should(MatchError(ContainSubstring("not found")))
	})
	It("pauses a provisioned host before BMO sees it deleted, and deprovisions it on the provisioning VLAN", func() {
		// host7's HostLink went with the last spec: rack1-p1 is free.
		Expect(k8s.Create(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "host8"},
			Spec: networkv1alpha1.HostLinkSpec{Ports: []networkv1alpha1.HostPort{
				{MAC: nic1, Port: networkv1alpha1.ObjectRef{Name: "rack1-p1"}, ProvisioningConfiguration: &networkv1alpha1.ObjectRef{Name: "prov"}},
			}}})).To(Succeed())
		machine("m8", "host8", `[{"configurationRef":{"name":"web"},"nicHint":{"mac":"`+nic1+`"}}]`)
		newHost("host8")
		Eventually(hostState("host8"), slow).Should(Equal(string(metal3v1alpha1.StateAvailable)))
		provision("host8", "m8")
		Eventually(hostState("host8"), slow).Should(Equal(string(metal3v1alpha1.StateProvisioned)))
		Eventually(linkStatus("host8"), slow).Should(Equal("tenant 1/1 PortsReady held=false"))
		Expect(tag("p1")()).To(Equal("201"))
		Expect(getHost("host8").Finalizers).To(ContainElement(metal3v1alpha1.BareMetalHostFinalizer))

		wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: k8s.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		w, err := wc.Watch(ctx, &metal3v1alpha1.BareMetalHostList{}, client.InNamespace(infra),
			client.MatchingFields{"metadata.name": "host8"})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		stop := watchHost("host8", "p1")

		By("deleting the provisioned host: the first version BMO sees deleted is paused")
		Expect(k8s.Delete(ctx, getHost("host8"))).To(Succeed())
		var first *metal3v1alpha1.BareMetalHost
		Eventually(func() bool {
			select {
			case ev := <-w.ResultChan():
				if o, ok := ev.Object.(*metal3v1alpha1.BareMetalHost); ok && !o.DeletionTimestamp.IsZero() {
					first = o
				}
			default:
			}
			return first != nil
		}, slow).Should(BeTrue())
		Expect(first.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire),
			"BMO saw the provisioned host deleted unpaused: it may deprovision while the port carries the tenant's VLAN")

		By("rackwire moves the port to the provisioning VLAN, lets BMO deprovision, then cleans the port")
		Eventually(hostState("host8"), slow).Should(Equal("gone"))
		Expect(stop()).To(BeEmpty())
		Expect(tag("p1")()).To(Equal(fmt.Sprint(switchlab.ParkingVLAN)))
		Expect(k8s.Delete(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "host8"}})).To(Succeed())
	})
})
