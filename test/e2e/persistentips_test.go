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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/devenv"
)

// The whole persistent-IP path with nothing played by the test but virt-controller and the
// kubelet: the manager's claim, the real webhook mutating launcher pods sent through the
// apiserver, the plugin under config/cni's roles in ip netns namespaces, and
// kube-controller-manager's garbage collector deleting a deleted VM's claims.
var _ = Describe("persistent IPs of KubeVirt VMs in network namespaces", Ordered, func() {
	const (
		network = "rw-pip"
		bridge  = "rwpip"
		vmName  = "vm-red"
		node    = "rw-pip-node"
	)
	var (
		ctx     = context.Background()
		env     *devenv.Env
		admin   client.Client
		tool    plugins
		pods    []netns
		dir     string
		claimIP net.IP
		claim   = vmName + ".red" // ipam-extensions' name: <vm>.<network of the VM>
	)

	BeforeAll(func() {
		Expect(os.Geteuid()).To(BeZero(), "the persistent-IP e2e test makes network namespaces and bridges: run it as root")
		dir = GinkgoT().TempDir()
		tool = newPlugins(dir)

		var err error
		env, err = devenv.Start(ctx, devenv.Options{Root: root, Dir: filepath.Join(dir, "dev"), Manager: manager, Log: GinkgoWriter,
			ManagerArgs: []string{"--nodeslice-namespace=kube-system"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		admin = env.Client

		// The plugin runs with config/cni's roles only: reading the pod and the claim
		// must be all it needs.
		kubeconfig := restrictedPlugin(ctx, env, dir)
		tool.confDir = filepath.Join(dir, "net.d")
		Expect(os.MkdirAll(tool.confDir, 0o700)).To(Succeed())
		DeferCleanup(func() {
			for _, p := range pods {
				p.remove()
			}
			_ = exec.Command("ip", "link", "del", bridge).Run()
		})

		tool.write(network, bridge, fmt.Sprintf(`{"type":"rackwire","kubernetes":{"kubeconfig":%q},"state_dir":%q,"range":"10.84.0.0/24","network_name":%q,"allowPersistentIPs":true,"timeout":"20s"}`,
			kubeconfig, filepath.Join(dir, "state"), network))
		conf, err := os.ReadFile(filepath.Join(tool.confDir, network+".conf"))
		Expect(err).NotTo(HaveOccurred())
		Expect(admin.Create(ctx, &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: network},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: string(conf)}})).To(Succeed())
	})

	newPod := func(name string) netns {
		p := addNetns(name)
		pods = append(pods, p)
		return p
	}
	// claimReservations are the reservations holding the claim's addresses (podref
	// default/<claim>), by address.
	claimReservations := func() []string {
		var list nodeslicev1alpha1.OverlappingRangeIPReservationList
		ExpectWithOffset(1, admin.List(ctx, &list, client.InNamespace("kube-system"))).To(Succeed())
		var names []string
		for _, r := range list.Items {
			if r.Spec.PodRef == "default/"+claim {
				names = append(names, r.Name)
			}
		}
		return names
	}
	createVM := func() *virtv1.VirtualMachine {
		vm := &virtv1.VirtualMachine{
			ObjectMeta: metav1.ObjectMeta{Name: vmName, Namespace: "default"},
			Spec: virtv1.VirtualMachineSpec{
				RunStrategy: ptr.To(virtv1.RunStrategyHalted),
				Template: &virtv1.VirtualMachineInstanceTemplateSpec{Spec: virtv1.VirtualMachineInstanceSpec{
					Domain: virtv1.DomainSpec{Devices: virtv1.Devices{Interfaces: []virtv1.Interface{
						{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}}},
						{Name: "red", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}},
					}}},
					Networks: []virtv1.Network{
						{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}},
						{Name: "red", NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: network}}},
					},
				}},
			},
		}
		ExpectWithOffset(1, admin.Create(ctx, vm)).To(Succeed())
		return vm
	}
	// claimOf waits for the VM's claim to have its address and returns it.
	claimOf := func(vm *virtv1.VirtualMachine) *ipamclaimsv1alpha1.IPAMClaim {
		c := &ipamclaimsv1alpha1.IPAMClaim{}
		EventuallyWithOffset(1, func(g Gomega) {
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: claim}, c)).To(Succeed())
			g.Expect(metav1.IsControlledBy(c, vm)).To(BeTrue(), "the claim of this VM, not of an old one")
			g.Expect(c.Status.IPs).To(HaveLen(1))
		}, time.Minute).Should(Succeed())
		return c
	}
	// startVMI does virt-controller's part of a start: the VMI, controlled by the VM.
	startVMI := func(vm *virtv1.VirtualMachine) *virtv1.VirtualMachineInstance {
		vmi := &virtv1.VirtualMachineInstance{
			ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Namespace: vm.Namespace,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, virtv1.VirtualMachineGroupVersionKind)}},
			Spec: vm.Spec.Template.Spec,
		}
		ExpectWithOffset(1, admin.Create(ctx, vmi)).To(Succeed())
		return vmi
	}
	// launcher creates a virt-launcher pod of the VMI through the apiserver, with the networks
	// annotation as virt-controller writes it (no claim reference: the webhook adds it), and
	// returns the pod as stored.
	launcher := func(name string, vmi *virtv1.VirtualMachineInstance) *corev1.Pod {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
				Labels:          map[string]string{"kubevirt.io": "virt-launcher"},
				Annotations:     map[string]string{"kubevirt.io/domain": vmi.Name, nadv1.NetworkAttachmentAnnot: `[{"name":"` + network + `","namespace":"default"}]`},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vmi, virtv1.VirtualMachineInstanceGroupVersionKind)}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "virt-launcher"}}},
		}
		ExpectWithOffset(1, admin.Create(ctx, pod)).To(Succeed())
		stored := &corev1.Pod{}
		ExpectWithOffset(1, admin.Get(ctx, client.ObjectKeyFromObject(pod), stored)).To(Succeed())
		return stored
	}
	// plainPod is a pod on the network that is not a launcher: the webhook never sees it.
	plainPod := func(name string) netns {
		ExpectWithOffset(1, admin.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
				Annotations: map[string]string{nadv1.NetworkAttachmentAnnot: `[{"name":"` + network + `"}]`}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}},
		})).To(Succeed())
		return newPod(name)
	}
	deletePod := func(name string) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		ExpectWithOffset(1, admin.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		EventuallyWithOffset(1, func() bool {
			return apierrors.IsNotFound(admin.Get(ctx, client.ObjectKeyFromObject(pod), pod))
		}, time.Minute).Should(BeTrue())
	}
	del := func(pod netns) {
		out, log, err := tool.run("del", network, node, pod)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), out+log)
	}

	var (
		vm      *virtv1.VirtualMachine
		vmi     *virtv1.VirtualMachineInstance
		plain   []netns
		plainIP = map[netns]net.IP{}
	)

	It("gives a launcher pod mutated by the webhook its VM's claimed address on ADD", func() {
		vm = createVM()
		c := claimOf(vm)
		ip, _, err := net.ParseCIDR(c.Status.IPs[0])
		Expect(err).NotTo(HaveOccurred())
		claimIP = ip
		Expect(claimReservations()).To(HaveLen(1))

		vmi = startVMI(vm)
		pod := launcher("virt-launcher-vm-red-a", vmi)
		var elems []nadv1.NetworkSelectionElement
		Expect(json.Unmarshal([]byte(pod.Annotations[nadv1.NetworkAttachmentAnnot]), &elems)).To(Succeed())
		Expect(elems).To(HaveLen(1))
		Expect(elems[0].IPAMClaimReference).To(Equal(claim), "the webhook's reference, as stored")

		ips := tool.add(network, node, newPod(pod.Name))
		Expect(ips).To(HaveLen(1))
		Expect(ips[0].Equal(claimIP)).To(BeTrue(), "launcher pod got %s, the claim holds %s", ips[0], claimIP)
	})

	It("never gives a plain pod on the network the claim's address, over many ADDs and DELs", func() {
		seen := map[string]netns{claimIP.String(): "the claim"}
		for i := range 6 {
			pod := plainPod(fmt.Sprintf("rw-pip-plain-%d", i))
			plain = append(plain, pod)
			ips := tool.add(network, node, pod)
			Expect(ips).To(HaveLen(1))
			Expect(seen).NotTo(HaveKey(ips[0].String()), "%s handed to %s and %s", ips[0], pod, seen[ips[0].String()])
			seen[ips[0].String()] = pod
			plainIP[pod] = ips[0]
		}
		// Freeing and taking the lowest free address again and again never lands on the claim's.
		churn := plain[len(plain)-1]
		for range 10 {
			del(churn)
			ips := tool.add(network, node, churn)
			Expect(ips[0].Equal(claimIP)).To(BeFalse(), "a plain pod got the claim's %s", claimIP)
		}
		Expect(reach(plain[0], "virt-launcher-vm-red-a", claimIP)).To(Succeed())
	})

	It("keeps the address through DEL and a VM restart: the new launcher pod gets it again", func() {
		del("virt-launcher-vm-red-a")
		Expect(claimReservations()).To(HaveLen(1), "a launcher pod's DEL never frees its claim's address")
		netns("virt-launcher-vm-red-a").remove()
		deletePod("virt-launcher-vm-red-a")
		Expect(admin.Delete(ctx, vmi)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(admin.Get(ctx, client.ObjectKeyFromObject(vmi), &virtv1.VirtualMachineInstance{}))
		}, time.Minute).Should(BeTrue())

		// A plain pod's ADD in between takes the lowest free address: not the claim's.
		extra := plainPod("rw-pip-plain-restart")
		plain = append(plain, extra)
		Expect(tool.add(network, node, extra)[0].Equal(claimIP)).To(BeFalse())

		vmi = startVMI(vm)
		pod := launcher("virt-launcher-vm-red-b", vmi)
		ips := tool.add(network, node, newPod(pod.Name))
		Expect(ips[0].Equal(claimIP)).To(BeTrue(), "after restart %s, the claim holds %s", ips[0], claimIP)
		Expect(reach(plain[1], "virt-launcher-vm-red-b", claimIP)).To(Succeed())
	})

	It("gives the migration target the same address while the source still has it", func() {
		target := launcher("virt-launcher-vm-red-c", vmi)
		ips := tool.add(network, node, newPod(target.Name))
		Expect(ips[0].Equal(claimIP)).To(BeTrue(), "migration target got %s, the claim holds %s", ips[0], claimIP)

		// The migration ends: the source goes, and the target answers on the address (the
		// client's neighbour entry still names the source, as before a gratuitous ARP).
		del("virt-launcher-vm-red-b")
		netns("virt-launcher-vm-red-b").remove()
		deletePod("virt-launcher-vm-red-b")
		Expect(claimReservations()).To(HaveLen(1))
		out, err := exec.Command("ip", "-n", string(plain[1]), "neigh", "flush", "all").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(reach(plain[1], "virt-launcher-vm-red-c", claimIP)).To(Succeed())
		Expect(reach("virt-launcher-vm-red-c", plain[0], plainIP[plain[0]])).To(Succeed())
	})

	It("lets the garbage collector delete a deleted VM's claim, then releases its address; a new VM of the name gets a claim", func() {
		del("virt-launcher-vm-red-c")
		Expect(claimReservations()).To(HaveLen(1))
		old := claimOf(vm)
		// Background deletion, as kubectl does: the garbage collector deletes the VMI, its
		// launcher pod and the claim; rackwire lets the claim go once the VMI is gone.
		Expect(admin.Delete(ctx, vm)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(admin.Get(ctx, client.ObjectKeyFromObject(old), &ipamclaimsv1alpha1.IPAMClaim{}))
		}, 2*time.Minute).Should(BeTrue(), "the claim is gone; kube-controller-manager's log: %s", env.ControllerManagerLog)
		Expect(apierrors.IsNotFound(admin.Get(ctx, client.ObjectKeyFromObject(vmi), &virtv1.VirtualMachineInstance{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "virt-launcher-vm-red-c"}, &corev1.Pod{}))).To(BeTrue())
		Eventually(claimReservations, time.Minute).Should(BeEmpty())

		vm = createVM()
		again := claimOf(vm)
		Expect(again.UID).NotTo(Equal(old.UID))
		Expect(claimReservations()).To(HaveLen(1))
	})

	It("starts a VM while the manager is down: the pod is admitted and the plugin finds the VM's claim itself", func() {
		c := claimOf(vm)
		ip, _, err := net.ParseCIDR(c.Status.IPs[0])
		Expect(err).NotTo(HaveOccurred())

		Expect(env.StopManager()).To(Succeed())
		DeferCleanup(func() { Expect(env.StartManager(ctx)).To(Succeed()) })
		vmi = startVMI(vm)
		pod := launcher("virt-launcher-vm-red-down", vmi)
		var elems []nadv1.NetworkSelectionElement
		Expect(json.Unmarshal([]byte(pod.Annotations[nadv1.NetworkAttachmentAnnot]), &elems)).To(Succeed())
		Expect(elems).To(HaveLen(1))
		Expect(elems[0].IPAMClaimReference).To(BeEmpty(), "admitted without the webhook (failurePolicy Ignore)")

		ips := tool.add(network, node, newPod(pod.Name))
		Expect(ips).To(HaveLen(1))
		Expect(ips[0].Equal(ip)).To(BeTrue(), "launcher pod got %s with the manager down, the claim holds %s", ips[0], ip)
		// The client may still have the address's earlier holder in its neighbour table.
		out, err := exec.Command("ip", "-n", string(plain[1]), "neigh", "flush", "all").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(reach(plain[1], "virt-launcher-vm-red-down", ip)).To(Succeed())
	})
})
