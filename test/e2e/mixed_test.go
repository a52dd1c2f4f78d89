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
	"os"
	"path/filepath"
	"strings"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/devenv"
)

// One network (one range, one network_name, one pools' namespace) served by NADs of both
// binaries, pods of each coming and going at once, whereabouts' DEL deleting reservations
// by name and its ip-control-loop cleaning up after pods deleted without DEL: no address is
// ever answered to two pods, and once the reapers' grace has passed nothing is left
// without a live holder.
var _ = Describe("a network shared by rackwire and whereabouts binaries", Ordered, func() {
	var (
		ctx  = context.Background()
		env  *devenv.Env
		dir  string
		bins string
		rw   ipamBin
		// The plugin calls as config/cni's roles allow, as on a node.
		pluginKubeconfig string
	)
	const node = "mx-node"

	BeforeAll(func() {
		dir = GinkgoT().TempDir()
		tool := newPlugins(dir)
		bins, rw.bin = tool.bins, tool.rackwire
		var err error
		env, err = devenv.Start(ctx, devenv.Options{Root: root, Dir: filepath.Join(dir, "dev"), Manager: manager, Log: GinkgoWriter,
			ManagerArgs: []string{"--nodeslice-namespace=kube-system", "--ip-reconciler-grace=3s", "--ip-reconciler-resync=5s"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		Expect(env.Client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}})).To(Succeed())
		allowWhereaboutsControlLoop(ctx, env.Client)
		pluginKubeconfig = restrictedPlugin(ctx, env, dir)
	})

	for _, tc := range []struct {
		network, ipamRange, slices string
		lease                      bool
	}{
		{network: "mx", ipamRange: "10.93.0.0/26"},
		{network: "mxl", ipamRange: "10.93.1.0/26", lease: true},
		// With node slices rackwire writes the pool behind its ADD unless it takes
		// whereabouts' Lease, which a network shared with whereabouts binaries needs.
		{network: "mxs", ipamRange: "10.93.2.0/24", slices: `,"node_slice_size":"/26"`, lease: true},
	} {
		network, ipamRange, lease := tc.network, tc.ipamRange, tc.lease
		It(fmt.Sprintf("never answers one address to two pods (whereabouts_lease: %v, node slices: %v)", lease, tc.slices != ""), func() {
			rw.conf = []byte(fmt.Sprintf(`{"cniVersion":"1.0.0","name":"%s-rw","type":"macvlan","ipam":{"type":"rackwire",`+
				`"range":%q,"network_name":%q,"kubernetes":{"kubeconfig":%q},"state_dir":%q,"whereabouts_lease":%v%s}}`,
				network, ipamRange, network, pluginKubeconfig, filepath.Join(dir, "state"), lease, tc.slices))
			// whereabouts wants a flat file even when the NAD names its kubeconfig.
			flat := filepath.Join(dir, "whereabouts.conf")
			Expect(os.WriteFile(flat, fmt.Appendf(nil, `{"kubernetes":{"kubeconfig":%q}}`, env.Kubeconfig), 0o600)).To(Succeed())
			wb := ipamBin{bin: filepath.Join(bins, "whereabouts"), conf: []byte(fmt.Sprintf(
				`{"cniVersion":"1.0.0","name":"%s-wb","type":"macvlan","ipam":{"type":"whereabouts",`+
					`"range":%q,"network_name":%q,"configuration_path":%q%s}}`, network, ipamRange, network, flat, tc.slices))}
			for _, b := range []struct {
				name string
				conf []byte
			}{{network + "-rw", rw.conf}, {network + "-wb", wb.conf}} {
				Expect(env.Client.Create(ctx, &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: b.name},
					Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: string(b.conf)}})).To(Succeed())
			}
			if tc.slices != "" {
				Eventually(func(g Gomega) {
					p := &nodeslicev1alpha1.NodeSlicePool{}
					g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: network}, p)).To(Succeed())
					g.Expect(p.Status.Allocations).To(ContainElement(HaveField("NodeName", node)))
				}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
			}
			controlLoop(ctx, env, bins, dir, node, "kube-system")

			ch := &churn{c: env.Client, ns: "kube-system", prefix: network, nodes: []string{node, node, node}, pods: 150, keep: 5,
				plugin: func(i int) (ipamBin, string) {
					if i%2 == 0 {
						return wb, network + "-wb"
					}
					return rw, network + "-rw"
				}}
			left := ch.run(ctx, time.Now().UnixNano())
			GinkgoWriter.Println("mixed network:", ch.String())
			Expect(ch.ledger.failures()).To(BeEmpty(), "addresses answered to two pods")
			Expect(ch.sampleFailures).To(BeEmpty(), "addresses recorded for two pods that were answered them")
			settled(ctx, env.Client, "kube-system", network, left, 90*time.Second)
			log, err := os.ReadFile(filepath.Join(dir, "ip-control-loop-"+node+".log"))
			Expect(err).NotTo(HaveOccurred())
			GinkgoWriter.Println("ip-control-loop cleaned up", strings.Count(string(log), "stale allocation to cleanup"), "allocations")
		})
	}
})
