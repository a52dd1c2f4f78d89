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
	"crypto/sha512"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	rwcni "github.com/rackwire/rackwire/internal/cni"
	"github.com/rackwire/rackwire/internal/controlplane"
	"github.com/rackwire/rackwire/internal/devenv"
)

// plugins runs cnitool with rackwire's plugin, the reference bridge plugin and the
// whereabouts binary, as a node's runtime does.
type plugins struct {
	path, bins, confDir, rackwire string
}

// run runs cnitool verb on network for the pod on node; stdout is its result.
func (p plugins) run(verb, network, node string, pod netns) (string, string, error) {
	cmd := exec.Command(filepath.Join(p.bins, "cnitool"), verb, network, pod.path())
	cmd.Env = append(os.Environ(), "CNI_PATH="+p.path, "NETCONFPATH="+p.confDir, "NODENAME="+node, "CNI_IFNAME=net1",
		"CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME="+string(pod))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func (p plugins) add(network, node string, pod netns) []net.IP {
	out, log, err := p.run("add", network, node, pod)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "cnitool add %s on %s: %s\n%s", network, node, out, log)
	var r result
	ExpectWithOffset(1, json.Unmarshal([]byte(out), &r)).To(Succeed(), out)
	var ips []net.IP
	for _, a := range r.IPs {
		ip, _, err := net.ParseCIDR(a.Address)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		ips = append(ips, ip)
	}
	return ips
}

// ipamOnly runs the plugin binary alone, as the bridge plugin delegates to it, for the
// container id cnitool derives from the pod's namespace path.
func (p plugins) ipamOnly(verb, network, node string, pod netns) (string, error) {
	conf, err := os.ReadFile(filepath.Join(p.confDir, network+".conf"))
	if err != nil {
		return "", err
	}
	cmd := exec.Command(p.rackwire)
	cmd.Env = append(os.Environ(), "CNI_COMMAND="+verb, "CNI_CONTAINERID="+cnitoolContainerID(pod), "CNI_NETNS="+pod.path(),
		"CNI_IFNAME=net1", "CNI_PATH="+p.path, "NODENAME="+node, "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME="+string(pod))
	cmd.Stdin = bytes.NewReader(conf)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), fmt.Errorf("%v: %s %s", err, out, ee.Stderr)
	}
	return string(out), err
}

// write writes a bridge network with the given ipam section. The bridge is made first with
// a fixed MAC: otherwise Linux gives it the lowest MAC of its ports, which changes as pods
// join, and the bridge plugin's CHECK compares it with the one cached at ADD.
func (p plugins) write(name, bridge, ipam string) {
	if exec.Command("ip", "link", "show", bridge).Run() != nil {
		for _, args := range [][]string{
			{"link", "add", bridge, "type", "bridge"},
			{"link", "set", bridge, "address", fmt.Sprintf("02:00:00:00:00:%02x", len(bridge)+int(bridge[len(bridge)-1]))},
			{"link", "set", bridge, "up"},
		} {
			out, err := exec.Command("ip", args...).CombinedOutput()
			ExpectWithOffset(1, err).NotTo(HaveOccurred(), string(out))
		}
	}
	conf := fmt.Sprintf(`{"cniVersion":"1.1.0","name":%q,"type":"bridge","bridge":%q,"isGateway":false,"ipMasq":false,"ipam":%s}`, name, bridge, ipam)
	ExpectWithOffset(1, os.WriteFile(filepath.Join(p.confDir, name+".conf"), []byte(conf), 0o600)).To(Succeed())
}

var _ = Describe("rackwire's CNI plugin in network namespaces", Ordered, func() {
	var (
		ctx     = context.Background()
		env     *devenv.Env
		admin   client.Client
		tool    plugins
		pods    []netns
		bridges = []string{"rwcni4", "rwcni6", "rwcnid", "rwcnim", "rwcnit"}
		dir     string
		cut     *cutter
	)
	// The plugin runs as a user with config/cni's roles only, as the DaemonSet's
	// service account does.
	var pluginKubeconfig string
	ipam := func(extra string) string {
		return fmt.Sprintf(`{"type":"rackwire","kubernetes":{"kubeconfig":%q},"state_dir":%q%s}`, pluginKubeconfig, filepath.Join(dir, "state"), extra)
	}

	BeforeAll(func() {
		Expect(os.Geteuid()).To(BeZero(), "the CNI e2e test makes network namespaces and bridges: run it as root")
		dir = GinkgoT().TempDir()
		tool = newPlugins(dir)

		var err error
		env, err = devenv.Start(ctx, devenv.Options{Root: root, Dir: filepath.Join(dir, "dev"), Manager: manager, Log: GinkgoWriter,
			ManagerArgs: []string{"--nodeslice-namespace=kube-system", "--nodeslice-release-grace=2s"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		admin = env.Client
		pluginKubeconfig = restrictedPlugin(ctx, env, dir)
		tool.confDir = filepath.Join(dir, "net.d")
		Expect(os.MkdirAll(tool.confDir, 0o700)).To(Succeed())
		DeferCleanup(func() {
			for _, p := range pods {
				p.remove()
			}
			for _, b := range bridges {
				_ = exec.Command("ip", "link", "del", b).Run()
			}
		})
	})
	newPod := func(name string) netns {
		p := addNetns(name)
		pods = append(pods, p)
		return p
	}
	ipPool := func(name string) *nodeslicev1alpha1.IPPool {
		ipp := &nodeslicev1alpha1.IPPool{}
		ExpectWithOffset(1, admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: name}, ipp)).To(Succeed())
		return ipp
	}
	reservationExists := func(name string) bool {
		err := admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: name}, &nodeslicev1alpha1.OverlappingRangeIPReservation{})
		if apierrors.IsNotFound(err) {
			return false
		}
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		return true
	}

	nodes := []string{"rw-node-a", "rw-node-b", "rw-node-c"}
	v4 := map[netns]net.IP{}

	It("allocates in each node's slice (IPv4), unique, pods reaching each other over the bridge", func() {
		tool.write("rw-cni-v4", "rwcni4", ipam(`,"range":"10.78.0.0/24","node_slice_size":"/26","network_name":"rw-cni-v4"`))
		for _, n := range nodes {
			Expect(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
		}
		conf, err := os.ReadFile(filepath.Join(tool.confDir, "rw-cni-v4.conf"))
		Expect(err).NotTo(HaveOccurred())
		Expect(admin.Create(ctx, &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "rw-cni-v4"},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: string(conf)}})).To(Succeed())
		slices := map[string]*net.IPNet{}
		for _, n := range nodes {
			Eventually(func(g Gomega) {
				p := &nodeslicev1alpha1.NodeSlicePool{}
				g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "rw-cni-v4"}, p)).To(Succeed())
				for _, a := range p.Status.Allocations {
					if a.NodeName == n {
						_, slices[n], _ = net.ParseCIDR(a.SliceRange)
					}
				}
				g.Expect(slices[n]).NotTo(BeNil())
			}, waitSlice).Should(Succeed())
		}
		for _, n := range nodes {
			for i := range 2 {
				pod := newPod(fmt.Sprintf("rw-cni-%s-%d", strings.TrimPrefix(n, "rw-node-"), i))
				ips := tool.add("rw-cni-v4", n, pod)
				Expect(ips).To(HaveLen(1))
				Expect(slices[n].Contains(ips[0])).To(BeTrue(), "%s on %s got %s outside its slice %s", pod, n, ips[0], slices[n])
				for other, a := range v4 {
					Expect(a.Equal(ips[0])).To(BeFalse(), "%s and %s both got %s", pod, other, a)
				}
				v4[pod] = ips[0]
			}
		}
		a0, c1 := netns("rw-cni-a-0"), netns("rw-cni-c-1")
		Expect(reach(a0, c1, v4[c1])).To(Succeed())
		Expect(reach(c1, a0, v4[a0])).To(Succeed())
		// The node's flusher writes the pool behind the ADDs.
		Eventually(func(g Gomega) map[string]nodeslicev1alpha1.IPAllocation {
			ipp := &nodeslicev1alpha1.IPPool{}
			name := "rw-cni-v4-rw-node-b-" + strings.ReplaceAll(slices["rw-node-b"].String(), "/", "-")
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: name}, ipp)).To(Succeed())
			return ipp.Spec.Allocations
		}, "30s").Should(HaveLen(2))
	})

	It("gives the same address to an ADD repeated for the same container and interface", func() {
		pod := netns("rw-cni-b-0")
		out, err := tool.ipamOnly("ADD", "rw-cni-v4", "rw-node-b", pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring(`"address": "` + v4[pod].String() + `/24"`))
	})

	It("passes CHECK while the address is held and fails it once the allocation is gone", func() {
		pod := netns("rw-cni-a-1")
		out, log, err := tool.run("check", "rw-cni-v4", "rw-node-a", pod)
		Expect(err).NotTo(HaveOccurred(), out+log)
		// Once the flusher has written it, an operator (or whereabouts' reconciler) removes it.
		Eventually(func(g Gomega) {
			var pools nodeslicev1alpha1.IPPoolList
			g.Expect(admin.List(ctx, &pools, client.InNamespace("kube-system"))).To(Succeed())
			removed := false
			for i := range pools.Items {
				p := &pools.Items[i]
				for k, a := range p.Spec.Allocations {
					if a.PodRef == "default/rw-cni-a-1" {
						delete(p.Spec.Allocations, k)
						g.Expect(admin.Update(ctx, p)).To(Succeed())
						removed = true
					}
				}
			}
			g.Expect(removed).To(BeTrue())
		}, "30s").Should(Succeed())
		_, log, err = tool.run("check", "rw-cni-v4", "rw-node-a", pod)
		Expect(err).To(HaveOccurred())
		Expect(log).To(ContainSubstring("no longer records it"))
	})

	It("frees on DEL, and DEL twice succeeds", func() {
		pod := netns("rw-cni-c-0")
		for range 2 {
			out, log, err := tool.run("del", "rw-cni-v4", "rw-node-c", pod)
			Expect(err).NotTo(HaveOccurred(), out+log)
		}
		// A DEL on a node-slice network is written behind: the node's flusher deletes the
		// reservation, and only then frees the address on the node.
		Eventually(func() bool { return reservationExists("rw-cni-v4-" + v4[pod].String()) }).Should(BeFalse())
		Eventually(func(g Gomega) {
			again := tool.add("rw-cni-v4", "rw-node-c", pod)
			if !again[0].Equal(v4[pod]) {
				_, log, err := tool.run("del", "rw-cni-v4", "rw-node-c", pod)
				g.Expect(err).NotTo(HaveOccurred(), log)
			}
			g.Expect(again[0].Equal(v4[pod])).To(BeTrue(), "the freed %s is the lowest free address again, got %s", v4[pod], again[0])
		}).Should(Succeed())
	})

	It("frees on GC what the runtime no longer lists", func() {
		_, log, err := tool.run("gc", "rw-cni-v4", "rw-node-b", netns("rw-cni-b-0"))
		Expect(err).NotTo(HaveOccurred(), log)
		// GC's releases are written behind, as DEL's are: the node's flusher takes the entries
		// out of the pool and deletes their reservations.
		Eventually(func(g Gomega) {
			var pools nodeslicev1alpha1.IPPoolList
			g.Expect(admin.List(ctx, &pools, client.InNamespace("kube-system"))).To(Succeed())
			for _, p := range pools.Items {
				for _, a := range p.Spec.Allocations {
					g.Expect(a.PodRef).NotTo(HavePrefix("default/rw-cni-b-"), "GC on node b left %s in %s", a.PodRef, p.Name)
				}
			}
		}).Should(Succeed())
		Eventually(func() bool { return reservationExists("rw-cni-v4-" + v4[netns("rw-cni-b-0")].String()) }).Should(BeFalse())
		Expect(reservationExists("rw-cni-v4-"+v4[netns("rw-cni-a-0")].String())).To(BeTrue(), "node a's pods are not node b's to collect")
	})

	It("serves IPv6 and dual-stack networks to pods on three nodes, reachable over the bridge", func() {
		tool.write("rw-cni-v6", "rwcni6", ipam(`,"range":"fd00:78::/64","network_name":"rw-cni-v6"`))
		tool.write("rw-cni-dual", "rwcnid", ipam(`,"range":"10.79.0.0/24","gateway":"10.79.0.1","ipRanges":[{"range":"fd00:79::/64"}],"network_name":"rw-cni-dual"`))
		six := map[netns]net.IP{}
		dual := map[netns][]net.IP{}
		for _, n := range nodes {
			pod := newPod("rw-six-" + strings.TrimPrefix(n, "rw-node-"))
			ips := tool.add("rw-cni-v6", n, pod)
			Expect(ips).To(HaveLen(1))
			Expect(ips[0].To4()).To(BeNil())
			six[pod] = ips[0]
			dpod := newPod("rw-dual-" + strings.TrimPrefix(n, "rw-node-"))
			dual[dpod] = tool.add("rw-cni-dual", n, dpod)
			Expect(dual[dpod]).To(HaveLen(2))
			Expect(dual[dpod][0].To4()).NotTo(BeNil())
			Expect(dual[dpod][1].To4()).To(BeNil())
		}
		Expect(six).To(HaveLen(3))
		Expect(ipPool("rw-cni-v6-fd00-78---64").Spec.Allocations).To(HaveLen(3))
		Expect(reach("rw-six-a", "rw-six-c", six["rw-six-c"])).To(Succeed())
		Expect(reach("rw-dual-c", "rw-dual-b", dual["rw-dual-b"][0])).To(Succeed())
		Expect(reach("rw-dual-a", "rw-dual-b", dual["rw-dual-b"][1])).To(Succeed())
	})

	It("reports an exhausted range with the network and node in the error", func() {
		tool.write("rw-cni-tiny", "rwcnit", ipam(`,"range":"10.81.0.0/30","network_name":"rw-cni-tiny"`))
		tool.add("rw-cni-tiny", "rw-node-a", newPod("rw-tiny-0"))
		tool.add("rw-cni-tiny", "rw-node-a", newPod("rw-tiny-1"))
		out, log, err := tool.run("add", "rw-cni-tiny", "rw-node-a", newPod("rw-tiny-2"))
		Expect(err).To(HaveOccurred(), out)
		Expect(out + log).To(ContainSubstring(`network "rw-cni-tiny", node rw-node-a: no free address in 10.81.0.0/30`))
	})

	It("never hands out one address twice when whereabouts v0.9.4 and rackwire share a network and node", func() {
		// One network (network_name rw-mixed, one range), two NADs: one whereabouts, one rackwire.
		flat := filepath.Join(dir, "whereabouts.conf")
		Expect(os.WriteFile(flat, fmt.Appendf(nil, `{"kubernetes":{"kubeconfig":%q}}`, env.Kubeconfig), 0o600)).To(Succeed())
		tool.write("rw-mixed-wb", "rwcnim", fmt.Sprintf(`{"type":"whereabouts","range":"10.82.0.0/24","network_name":"rw-mixed","configuration_path":%q}`, flat))
		// whereabouts_lease: rackwire takes whereabouts' Lease on this shared network, so the
		// whereabouts binary's check-then-write never meets a rackwire reservation midway.
		tool.write("rw-mixed-rw", "rwcnim", ipam(`,"range":"10.82.0.0/24","network_name":"rw-mixed","whereabouts_lease":true`))
		type got struct {
			pod netns
			ips []net.IP
			err error
		}
		results := make(chan got, 16)
		var wg sync.WaitGroup
		for i := range 16 {
			network := []string{"rw-mixed-wb", "rw-mixed-rw"}[i%2]
			pod := newPod(fmt.Sprintf("rw-mix-%d", i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				out, log, err := tool.run("add", network, "rw-node-a", pod)
				if err != nil {
					results <- got{pod: pod, err: fmt.Errorf("%s: %v: %s %s", network, err, out, log)}
					return
				}
				var r result
				Expect(json.Unmarshal([]byte(out), &r)).To(Succeed())
				ip, _, _ := net.ParseCIDR(r.IPs[0].Address)
				results <- got{pod: pod, ips: []net.IP{ip}}
			}()
		}
		wg.Wait()
		close(results)
		seen := map[string]netns{}
		for r := range results {
			Expect(r.err).NotTo(HaveOccurred())
			s := r.ips[0].String()
			Expect(seen).NotTo(HaveKey(s), "%s handed to %s and %s", s, seen[s], r.pod)
			seen[s] = r.pod
		}
		Expect(ipPool("rw-mixed-10.82.0.0-24").Spec.Allocations).To(HaveLen(16))
	})

	It("fails an ADD cut off from the apiserver within its timeout, and the runtime's DEL undoes it", func() {
		var err error
		cut, err = newCutter(env.Config.Host)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cut.close)
		// The plugin's kubeconfig goes through the cutter.
		raw, err := os.ReadFile(pluginKubeconfig)
		Expect(err).NotTo(HaveOccurred())
		kc := map[string]any{}
		Expect(yaml.Unmarshal(raw, &kc)).To(Succeed())
		for _, c := range kc["clusters"].([]any) {
			c.(map[string]any)["cluster"].(map[string]any)["server"] = "https://" + cut.addr()
		}
		raw, err = yaml.Marshal(kc)
		Expect(err).NotTo(HaveOccurred())
		viaCut := filepath.Join(dir, "cut.kubeconfig")
		Expect(os.WriteFile(viaCut, raw, 0o600)).To(Succeed())
		tool.write("rw-cni-cut", "rwcnit", fmt.Sprintf(`{"type":"rackwire","kubernetes":{"kubeconfig":%q},"state_dir":%q,"range":"10.83.0.0/24","network_name":"rw-cni-cut","sleep_for_race":2,"timeout":"4s"}`,
			viaCut, filepath.Join(dir, "state")))
		pod := newPod("rw-cut-0")
		done := make(chan error, 1)
		go func() {
			_, _, err := tool.run("add", "rw-cni-cut", "rw-node-a", pod)
			done <- err
		}()
		// The reservation lands, then the apiserver goes away before the pool write.
		Eventually(func() bool { return reservationExists("rw-cni-cut-10.83.0.1") }, "10s", "50ms").Should(BeTrue())
		cut.stop()
		Eventually(done, "30s").Should(Receive(HaveOccurred()))
		cut.start()
		out, log, err := tool.run("del", "rw-cni-cut", "rw-node-a", pod)
		Expect(err).NotTo(HaveOccurred(), out+log)
		// The DEL is written behind: the node's flusher deletes the reservation.
		Eventually(func() bool { return reservationExists("rw-cni-cut-10.83.0.1") }).Should(BeFalse(), "the DEL after a failed ADD frees the reservation the ADD made")
		p := &nodeslicev1alpha1.IPPool{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "rw-cni-cut-10.83.0.0-24"}, p); err == nil {
			Eventually(func(g Gomega) {
				g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
				g.Expect(p.Spec.Allocations).To(BeEmpty())
			}).Should(Succeed())
		}
		// The network's state is keyed by its pools: <network_name>@<hash of namespace, name, ranges>.
		dirs, err := filepath.Glob(filepath.Join(dir, "state", "rw-node-a", "rw-cni-cut@*"))
		Expect(err).NotTo(HaveOccurred())
		Expect(dirs).To(HaveLen(1))
		entries, err := os.ReadDir(dirs[0])
		Expect(err).NotTo(HaveOccurred())
		for _, e := range entries {
			Expect(e.Name()).To(HavePrefix("."), "a record is left behind")
		}
		ips := tool.add("rw-cni-cut", "rw-node-a", newPod("rw-cut-1"))
		Expect(ips[0].String()).To(Equal("10.83.0.1"))
	})
})

// cnitoolContainerID is the container id cnitool derives from a pod's namespace path.
func cnitoolContainerID(pod netns) string {
	s := sha512.Sum512([]byte(pod.path()))
	return fmt.Sprintf("cnitool-%x", s[:10])
}

// newPlugins builds the plugin into dir/bin, beside the CNI binaries of hack/cni-bins.sh.
func newPlugins(dir string) plugins {
	out, err := exec.Command(filepath.Join(root, "hack/cni-bins.sh")).Output()
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "building the CNI binaries")
	bins := strings.TrimSpace(string(out))
	own := filepath.Join(dir, "bin")
	ExpectWithOffset(1, os.MkdirAll(own, 0o755)).To(Succeed())
	p := plugins{rackwire: filepath.Join(own, "rackwire"), path: own + ":" + bins, bins: bins}
	build := exec.Command("go", "build", "-o", p.rackwire, "./cmd/cni")
	build.Dir = root
	b, err := build.CombinedOutput()
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), string(b))
	// dir stands for the node's directories: the plugin accepts the paths it holds only
	// (state_dir: dir/state itself, as every configuration names it).
	ExpectWithOffset(1, rwcni.WriteRoots(p.rackwire, rwcni.Roots{State: []string{filepath.Join(dir, "state")}, Log: []string{dir}, Config: []string{dir}})).To(Succeed())
	return p
}

// restrictedPlugin writes a kubeconfig for a user holding config/cni's roles only, as the
// DaemonSet's service account does (the Role in the pools' namespace, kube-system here as the
// manager's --nodeslice-namespace says; the ClusterRole's reads), so a verb needing more
// fails here first.
func restrictedPlugin(ctx context.Context, env *devenv.Env, dir string) string {
	objs, err := controlplane.ReadObjects(filepath.Join(root, "config/cni/role.yaml"))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	// The opt-in Role for whereabouts_lease: the mixed network below sets it.
	optIn, err := controlplane.ReadObjects(filepath.Join(root, "config/cni/whereabouts-lease.yaml"))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, o := range optIn {
		if o.GetKind() == "Role" {
			o.SetNamespace(metav1.NamespaceSystem)
			ExpectWithOffset(1, env.Client.Create(ctx, o)).To(Succeed())
			ExpectWithOffset(1, env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: o.GetName(), Namespace: metav1.NamespaceSystem},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: o.GetName()},
				Subjects: []rbacv1.Subject{{Kind: "User", Name: "rackwire-cni", APIGroup: "rbac.authorization.k8s.io"}}})).To(Succeed())
		}
	}
	user := rbacv1.Subject{Kind: "User", Name: "rackwire-cni", APIGroup: "rbac.authorization.k8s.io"}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			o.SetName("rackwire-cni")
			ExpectWithOffset(1, env.Client.Create(ctx, o)).To(Succeed())
		case "Role":
			o.SetName("rackwire-cni-pools")
			o.SetNamespace(metav1.NamespaceSystem)
			ExpectWithOffset(1, env.Client.Create(ctx, o)).To(Succeed())
		}
	}
	ExpectWithOffset(1, env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "rackwire-cni"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "rackwire-cni"},
		Subjects: []rbacv1.Subject{user}})).To(Succeed())
	ExpectWithOffset(1, env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "rackwire-cni-pools", Namespace: metav1.NamespaceSystem},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "rackwire-cni-pools"},
		Subjects: []rbacv1.Subject{user}})).To(Succeed())
	kubeconfig := filepath.Join(dir, "cni.kubeconfig")
	ExpectWithOffset(1, env.WriteKubeconfig(kubeconfig, envtest.User{Name: "rackwire-cni"})).To(Succeed())
	return kubeconfig
}
