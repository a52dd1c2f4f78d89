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

package hostlink_test

import (
	"errors"
	"fmt"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controller/hostlink"
	"github.com/rackwire/rackwire/internal/scheme"
)

// A host writer must not be able to send BMO off deprovisioning while the host's ports are
// still on the tenant's VLAN: every write that changes the network a wired host needs is
// admitted with rackwire's pause in it, whatever else the write does to the host.
var _ = Describe("host writers cannot deprovision a wired host unheld", Ordered, ContinueOnFailure, func() {
	const (
		ns      = "rv-infra"
		chassis = "aa:bb:cc:00:01:26"
	)

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &networkv1alpha1.SwitchResourceLimit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networkv1alpha1.SwitchResourceLimitName},
			Spec:       networkv1alpha1.SwitchResourceLimitSpec{VLANRange: "900-950"},
		})).To(Succeed())
		m := metav1.ObjectMeta{Namespace: ns, Name: "leafrv"}
		ports := map[string]networkv1alpha1.PortInfo{}
		for i := 1; i <= 4; i++ {
			ports[fmt.Sprintf("r%d", i)] = networkv1alpha1.PortInfo{Name: fmt.Sprintf("Ethernet3/%d", i)}
		}
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: m, StringData: map[string]string{"username": "u", "password": "p"}},
			&networkv1alpha1.AnsibleSwitch{ObjectMeta: m, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: "127.0.0.27", Port: 22,
				Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leafrv"}}},
			&networkv1alpha1.Switch{ObjectMeta: m, Spec: networkv1alpha1.SwitchSpec{
				Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leafrv"}, ChassisMAC: chassis,
				Clean: networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(4000))}, Ports: ports}},
			config(ns, "prov", 900), config(ns, "web920", 920),
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		for i := 1; i <= 4; i++ {
			Eventually(portState(ns, fmt.Sprintf("r%d", i))).Should(Equal(networkv1alpha1.StateIdle))
		}
	})

	// provisioned wires a host to a port through a HostLink, lets it reach the tenant's
	// configuration through a Metal3Machine that names it back, and waits until rackwire lets
	// it go.
	provisioned := func(host, mac, port string) {
		machine(ns, "m-"+host, host, `[{"configurationRef":{"name":"web920"},"nicHint":{"mac":"`+mac+`"}}]`)
		Expect(k8s.Create(ctx, hostLink(ns, host, mac, port, "prov"))).To(Succeed())
		newHost(ns, host, mac)
		consume(ns, host, ns, "m-"+host)
		setStatus(ns, host, metal3v1alpha1.StateProvisioned)
		Eventually(linkOf(ns, host)).Should(Equal("tenant 1/1"))
		Eventually(pausedBy(ns, host)).Should(BeEmpty())
		Expect(configOf(ns, port)()).To(Equal(ns + "/web920"))
	}
	update := func(name string, edit func(*metal3v1alpha1.BareMetalHost)) *metal3v1alpha1.BareMetalHost {
		h := &metal3v1alpha1.BareMetalHost{}
		EventuallyWithOffset(1, func() error {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
				return err
			}
			edit(h)
			return k8s.Update(ctx, h)
		}).Should(Succeed())
		return h
	}

	It("holds a wired host whose image is taken away in the same write that drops rackwire's finalizer and label", func() {
		provisioned("hr1", "52:54:27:00:00:01", "r1")
		// The host writer strips what marks the host as rackwire's and scales it down at once:
		// BMO sees the admitted object and deprovisions while the port carries VLAN 920.
		h := update("hr1", func(h *metal3v1alpha1.BareMetalHost) {
			controllerutil.RemoveFinalizer(h, hostlink.Finalizer)
			delete(h.Labels, networkv1alpha1.LabelWired)
			h.Spec.Image = nil
		})
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire),
			"the write that takes the image away must carry rackwire's pause, or BMO deprovisions on the tenant's VLAN")
	})

	It("holds a host whose foreign pause is lifted while its ports do not carry the network it needs", func() {
		provisioned("hr2", "52:54:27:00:00:02", "r2")
		drivers.Get(ns, "leafrv").FailPort("Ethernet3/2", errors.New("switch unreachable"))
		DeferCleanup(func() { drivers.Get(ns, "leafrv").FailPort("Ethernet3/2", nil) })

		By("the host writer pauses the host itself and takes the image away: rackwire leaves a foreign pause alone")
		update("hr2", func(h *metal3v1alpha1.BareMetalHost) {
			metav1.SetMetaDataAnnotation(&h.ObjectMeta, metal3v1alpha1.PausedAnnotation, "tenant")
			h.Spec.Image = nil
		})
		Eventually(heldOf(ns, "hr2")).Should(HavePrefix(hostlink.ReasonPausedByOther))
		Eventually(readyOf(ns, "hr2")).Should(HavePrefix(hostlink.ReasonPortFailed))
		Expect(configOf(ns, "r2")()).To(Equal(ns + "/prov"))

		By("the host writer lifts its pause while the port still fails: BMO must not see the host unpaused")
		h := update("hr2", func(h *metal3v1alpha1.BareMetalHost) {
			delete(h.Annotations, metal3v1alpha1.PausedAnnotation)
		})
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire),
			"lifting a foreign pause of a host whose ports are not on the provisioning network must be admitted with rackwire's pause")
	})

	It("lets a host with discovered wiring go when its namespace is deleted and its HostLink goes first", func() {
		const del, macZ = "rv-del", "52:54:27:00:00:04"
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: del}})).To(Succeed())
		Eventually(func() error {
			sw := &networkv1alpha1.Switch{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "leafrv"}, sw); err != nil {
				return err
			}
			sw.Spec.DiscoveryNamespaces = []string{del}
			return k8s.Update(ctx, sw)
		}).Should(Succeed())
		newHost(del, "hz", macZ)
		setStatus(del, "hz", metal3v1alpha1.StateAvailable, lldpNIC(macZ, chassis, "Ethernet3/4"))
		Eventually(linkOf(del, "hz")).Should(Equal("provisioning 1/1"))

		By("the namespace is deleted: its HostLink goes first, then the host, as the namespace controller may order them")
		Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: del}})).To(Succeed())
		Expect(k8s.Delete(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: del, Name: "hz"}})).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: del, Name: "hz"}, &networkv1alpha1.HostLink{}))
		}).Should(BeTrue())
		Expect(k8s.Delete(ctx, &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: del, Name: "hz"}})).To(Succeed())
		Eventually(func() []string {
			h := &metal3v1alpha1.BareMetalHost{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: del, Name: "hz"}, h); err != nil {
				return nil
			}
			return h.Finalizers
		}).ShouldNot(ContainElement(hostlink.Finalizer), "a terminating namespace refuses the HostLink rackwire recreates; the host must not wait for it")
	})

	It("keeps rackwire's pause on a host whose wiring goes while its consumer is paused for a move", func() {
		const macQ = "52:54:27:00:00:05"
		machine(ns, "m-hq", "hq", `[{"configurationRef":{"name":"web920"},"nicHint":{"mac":"`+macQ+`"}}]`)
		Expect(k8s.Create(ctx, hostLink(ns, "hq", macQ, "rv-missing", "prov"))).To(Succeed())
		newHost(ns, "hq", macQ)
		consume(ns, "hq", ns, "m-hq")
		Eventually(heldOf(ns, "hq")).Should(HavePrefix(hostlink.ReasonPortFailed))
		Expect(pausedBy(ns, "hq")()).To(Equal(networkv1alpha1.PausedByRackwire))

		By("clusterctl move pauses the consumer: rackwire keeps its hold and writes BMO's status annotation")
		setMachineAnnotation(ns, "m-hq", "cluster.x-k8s.io/paused", "")
		Eventually(heldOf(ns, "hq")).Should(HavePrefix(hostlink.ReasonConsumerPaused))

		By("the host's HostLink goes mid-move (the target cluster has none yet, or a person deletes it): the hold must stay until the consumer is unpaused")
		Expect(k8s.Delete(ctx, &networkv1alpha1.HostLink{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hq"}})).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hq"}, &networkv1alpha1.HostLink{}))
		}).Should(BeTrue())
		// With nothing wired any more rackwire takes its finalizer off the host.
		Eventually(func() []string {
			h := &metal3v1alpha1.BareMetalHost{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hq"}, h)).To(Succeed())
			return h.Finalizers
		}).ShouldNot(ContainElement(hostlink.Finalizer))
		Expect(pausedBy(ns, "hq")()).To(Equal(networkv1alpha1.PausedByRackwire), "rackwire lifted its pause while the consumer was paused for a move")
		setMachineAnnotation(ns, "m-hq", "cluster.x-k8s.io/paused", "-")
		Eventually(pausedBy(ns, "hq")).Should(BeEmpty())
	})

	It("keeps a wired host held when a host writer lifts rackwire's own pause before its ports carry the network it needs", func() {
		provisioned("hr6", "52:54:27:00:00:06", "r4")
		drivers.Get(ns, "leafrv").FailPort("Ethernet3/4", errors.New("switch unreachable"))
		DeferCleanup(func() { drivers.Get(ns, "leafrv").FailPort("Ethernet3/4", nil) })
		h := update("hr6", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Image = nil })
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire))
		Eventually(heldOf(ns, "hr6")).Should(HavePrefix(hostlink.ReasonPortFailed))

		By("the host writer deletes rackwire's pause while the port still fails: BMO must not see the host unpaused")
		h = update("hr6", func(h *metal3v1alpha1.BareMetalHost) {
			delete(h.Annotations, metal3v1alpha1.PausedAnnotation)
		})
		Expect(h.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire),
			"lifting rackwire's pause of a host whose ports are not on the provisioning network must not be admitted unheld")
	})

	// A mutating webhook cannot change an object on DELETE: the host's DELETE webhook writes
	// rackwire's pause itself before it admits the deletion, so the first version of the host
	// BMO sees deleted is already paused.
	It("pauses a provisioned wired host in the same write that deletes it", func() {
		provisioned("hr3", "52:54:27:00:00:03", "r3")
		// BMO's finalizer, as BMO puts it on every host it manages: a deleted host keeps it
		// while BMO deprovisions.
		update("hr3", func(h *metal3v1alpha1.BareMetalHost) {
			controllerutil.AddFinalizer(h, metal3v1alpha1.BareMetalHostFinalizer)
		})
		DeferCleanup(func() {
			update("hr3", func(h *metal3v1alpha1.BareMetalHost) {
				controllerutil.RemoveFinalizer(h, metal3v1alpha1.BareMetalHostFinalizer)
			})
		})
		wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
		Expect(err).NotTo(HaveOccurred())
		w, err := wc.Watch(ctx, &metal3v1alpha1.BareMetalHostList{}, client.InNamespace(ns),
			client.MatchingFields{"metadata.name": "hr3"})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()

		By("a person deletes the provisioned host: BMO starts deprovisioning as soon as it sees the deletion")
		h := &metal3v1alpha1.BareMetalHost{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hr3"}, h)).To(Succeed())
		Expect(k8s.Delete(ctx, h)).To(Succeed(), "the manager runs: the deletion of a wired host is admitted, paused")
		var first *metal3v1alpha1.BareMetalHost
		Eventually(func() bool {
			select {
			case ev := <-w.ResultChan():
				if o, ok := ev.Object.(*metal3v1alpha1.BareMetalHost); ok && ev.Type != watch.Error && !o.DeletionTimestamp.IsZero() {
					first = o
				}
			default:
			}
			return first != nil
		}).Should(BeTrue())
		Expect(hostlink.NetworkOf(first)).To(Equal(networkv1alpha1.NetworkProvisioning))
		Expect(first.Annotations).To(HaveKeyWithValue(metal3v1alpha1.PausedAnnotation, networkv1alpha1.PausedByRackwire),
			"the first version of the host BMO sees deleted must be paused, or BMO deprovisions on the tenant's VLAN (port %s)", configOf(ns, "r3")())
	})
})
