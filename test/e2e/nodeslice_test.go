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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/devenv"
)

// The whereabouts e2e network: a bridge in the host namespace (every simulated node's pods
// hang off it), no masquerading (no iptables here), /26 slices of a /24.
const (
	e2eNetwork = "rw-e2e-net"
	e2eBridge  = "rwe2ebr0"
	e2eRange   = "10.77.0.0/24"
	// waitSlice bounds how long a slice may take to be published on this busy machine.
	waitSlice = "30s"
)

func e2eNetConf(extraIPAM string) string {
	return fmt.Sprintf(`{"cniVersion":"1.0.0","name":"rw-e2e","type":"bridge","bridge":%q,"isGateway":false,"ipMasq":false,`+
		`"ipam":{"type":"whereabouts","range":%q,"node_slice_size":"/26","network_name":%q%s}}`, e2eBridge, e2eRange, e2eNetwork, extraIPAM)
}

// cni drives the real binaries: cnitool runs the bridge plugin, which delegates to the
// whereabouts binary, as a node's container runtime would.
type cni struct {
	bins, confDir string
}

// result is what cnitool prints for an ADD.
type result struct {
	IPs []struct {
		Address string `json:"address"`
	} `json:"ips"`
}

// run runs cnitool; stdout is its result, log has what the plugins wrote to stderr.
func (c cni) run(verb, node string, pod netns) (stdout, log string, err error) {
	cmd := exec.Command(filepath.Join(c.bins, "cnitool"), verb, "rw-e2e", pod.path())
	cmd.Env = append(os.Environ(),
		"CNI_PATH="+c.bins, "NETCONFPATH="+c.confDir, "NODENAME="+node, "CNI_IFNAME=net1",
		"CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME="+string(pod))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func (c cni) add(node string, pod netns) net.IP {
	out, log, err := c.run("add", node, pod)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "cnitool add on %s: %s\n%s", node, out, log)
	var r result
	ExpectWithOffset(1, json.Unmarshal([]byte(out), &r)).To(Succeed(), out)
	ExpectWithOffset(1, r.IPs).To(HaveLen(1), out)
	ip, _, err := net.ParseCIDR(r.IPs[0].Address)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return ip
}

// ipPoolName is the IPPool whereabouts keeps for a node's slice: network, node, slice.
func ipPoolName(node string, slice *net.IPNet) string {
	return e2eNetwork + "-" + node + "-" + strings.ReplaceAll(slice.String(), "/", "-")
}

var _ = Describe("node slices with the real whereabouts binary", Ordered, func() {
	var (
		ctx   = context.Background()
		env   *devenv.Env
		admin client.Client
		tool  cni
		pods  []netns
	)

	BeforeAll(func() {
		Expect(os.Geteuid()).To(BeZero(), "the node-slice e2e test makes network namespaces and bridges: run it as root")
		out, err := exec.Command(filepath.Join(root, "hack/cni-bins.sh")).Output()
		Expect(err).NotTo(HaveOccurred(), "building the CNI binaries")
		tool.bins = strings.TrimSpace(string(out))

		dir := GinkgoT().TempDir()
		env, err = devenv.Start(ctx, devenv.Options{Root: root, Dir: filepath.Join(dir, "dev"), Manager: manager, Log: GinkgoWriter,
			// kube-system: what the whereabouts binary uses when its kubeconfig's context names no namespace.
			ManagerArgs: []string{"--nodeslice-namespace=kube-system", "--nodeslice-release-grace=2s"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		admin = env.Client

		// The flat file names the kubeconfig, as whereabouts' daemonset writes it on a node;
		// the network's configuration on the "node" points at it.
		flat := filepath.Join(dir, "whereabouts.conf")
		Expect(os.WriteFile(flat, fmt.Appendf(nil, `{"kubernetes":{"kubeconfig":%q},"log_file":%q,"log_level":"debug"}`,
			env.Kubeconfig, filepath.Join(dir, "whereabouts.log")), 0o600)).To(Succeed())
		tool.confDir = filepath.Join(dir, "net.d")
		Expect(os.MkdirAll(tool.confDir, 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(tool.confDir, "rw-e2e.conf"), []byte(e2eNetConf(fmt.Sprintf(`,"configuration_path":%q`, flat))), 0o600)).To(Succeed())
		DeferCleanup(func() {
			for _, p := range pods {
				p.remove()
			}
			_ = exec.Command("ip", "link", "del", e2eBridge).Run()
		})
	})

	pool := func(g Gomega) *nodeslicev1alpha1.NodeSlicePool {
		p := &nodeslicev1alpha1.NodeSlicePool{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: e2eNetwork}, p)).To(Succeed())
		return p
	}
	sliceOf := func(node string) func(Gomega) string {
		return func(g Gomega) string {
			for _, a := range pool(g).Status.Allocations {
				if a.NodeName == node {
					return a.SliceRange
				}
			}
			return ""
		}
	}
	ipPool := func(node string, slice *net.IPNet) *nodeslicev1alpha1.IPPool {
		ipp := &nodeslicev1alpha1.IPPool{}
		ExpectWithOffset(1, admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: ipPoolName(node, slice)}, ipp)).To(Succeed())
		return ipp
	}
	newPod := func(name string) netns {
		p := addNetns(name)
		pods = append(pods, p)
		return p
	}

	nodes := []string{"wb-node-a", "wb-node-b", "wb-node-c"}
	slices := map[string]*net.IPNet{}
	addrs := map[netns]net.IP{}

	It("publishes a slice per Node of a NAD in node-slice mode", func() {
		for _, n := range nodes {
			Expect(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
		}
		Expect(admin.Create(ctx, &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "rw-e2e"},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: e2eNetConf("")}})).To(Succeed())
		for _, n := range nodes {
			Eventually(sliceOf(n), waitSlice).ShouldNot(BeEmpty())
			_, s, err := net.ParseCIDR(sliceOf(n)(Default))
			Expect(err).NotTo(HaveOccurred())
			slices[n] = s
		}
	})

	It("fails the binary on a node without a slice, as whereabouts does", func() {
		out, log, err := tool.run("add", "wb-no-such-node", newPod("rw-e2e-ghost"))
		Expect(err).To(HaveOccurred(), out)
		Expect(log).To(ContainSubstring("no allocated node slice for node"))
	})

	It("gives each pod an address of its node's slice, unique, reachable over the bridge", func() {
		for _, n := range nodes {
			for i := range 2 {
				pod := newPod(fmt.Sprintf("rw-e2e-%s-%d", strings.TrimPrefix(n, "wb-node-"), i))
				ip := tool.add(n, pod)
				Expect(slices[n].Contains(ip)).To(BeTrue(), "%s on %s got %s outside its slice %s", pod, n, ip, slices[n])
				for other, a := range addrs {
					Expect(a.Equal(ip)).To(BeFalse(), "%s and %s both got %s", pod, other, ip)
				}
				addrs[pod] = ip
			}
		}
		a0, c1 := netns("rw-e2e-a-0"), netns("rw-e2e-c-1")
		Expect(reach(a0, c1, addrs[c1])).To(Succeed())
		Expect(reach(c1, a0, addrs[a0])).To(Succeed())
		// whereabouts' own per-node IPPool, named after network, node and slice, holds them.
		Expect(ipPool("wb-node-b", slices["wb-node-b"]).Spec.Allocations).To(HaveLen(2))
	})

	It("frees an address on cnitool del", func() {
		pod := netns("rw-e2e-b-1")
		out, log, err := tool.run("del", "wb-node-b", pod)
		Expect(err).NotTo(HaveOccurred(), out+log)
		Expect(ipPool("wb-node-b", slices["wb-node-b"]).Spec.Allocations).To(HaveLen(1))
		again := tool.add("wb-node-b", pod)
		Expect(again.Equal(addrs[pod])).To(BeTrue(), "the freed %s is the lowest free address again, got %s", addrs[pod], again)
	})

	It("frees a deleted Node's slice, and hands it on only once its addresses are released", func() {
		Expect(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "wb-node-d"}})).To(Succeed())
		Eventually(sliceOf("wb-node-d"), waitSlice).ShouldNot(BeEmpty())
		// Node c goes while its pods' addresses are still in its IPPool (its kubelet is gone,
		// whereabouts' reconciler has not run yet).
		Expect(admin.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "wb-node-c"}})).To(Succeed())
		Eventually(sliceOf("wb-node-c"), waitSlice).Should(BeEmpty())
		Expect(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "wb-node-e"}})).To(Succeed())
		Consistently(sliceOf("wb-node-e"), "4s").Should(BeEmpty(), "node c's slice still holds its pods' addresses")
		Eventually(func(g Gomega) string {
			c := meta.FindStatusCondition(pool(g).Status.Conditions, nodeslicev1alpha1.ConditionNodesWithoutSlice)
			g.Expect(c).NotTo(BeNil())
			return c.Message
		}, waitSlice).Should(ContainSubstring("wb-node-e"))
		out, _, err := tool.run("add", "wb-node-e", newPod("rw-e2e-e-0"))
		Expect(err).To(HaveOccurred(), "node e has no slice yet: %s", out)

		// What whereabouts' reconciler does for pods that are gone: their allocations go.
		ipp := ipPool("wb-node-c", slices["wb-node-c"])
		ipp.Spec.Allocations = map[string]nodeslicev1alpha1.IPAllocation{}
		Expect(admin.Update(ctx, ipp)).To(Succeed())
		Eventually(sliceOf("wb-node-e"), waitSlice).Should(Equal(slices["wb-node-c"].String()))
		// A fresh pod: the failed ADD left its interface behind, as a runtime's DEL would not.
		ip := tool.add("wb-node-e", newPod("rw-e2e-e-1"))
		Expect(slices["wb-node-c"].Contains(ip)).To(BeTrue())
	})
})
