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
	"strconv"
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

// churnPods is the number of pods of the churn spec: RACKWIRE_CHURN_PODS, else 2,000.
func churnPods() int {
	if n, err := strconv.Atoi(os.Getenv("RACKWIRE_CHURN_PODS")); err == nil && n > 0 {
		return n
	}
	return 2000
}

// Pods come and go on ten nodes of a node-slice network through the plugin binary, one
// DEL in ten never sent, a node deleted with its pods halfway, whereabouts' ip-control-loop
// running in the pools' namespace: no address is ever answered to two pods nor recorded for
// two at any sampled moment, and once the IP reconciler's grace has passed every pool entry
// and reservation has a live holder.
var _ = Describe("churn on a node-slice network", Ordered, func() {
	const network = "churn"
	var (
		ctx   = context.Background()
		env   *devenv.Env
		dir   string
		rw    ipamBin
		bins  string
		nodes []string
	)

	BeforeAll(func() {
		dir = GinkgoT().TempDir()
		tool := newPlugins(dir)
		bins, rw.bin = tool.bins, tool.rackwire
		var err error
		env, err = devenv.Start(ctx, devenv.Options{Root: root, Dir: filepath.Join(dir, "dev"), Manager: manager, Log: GinkgoWriter,
			ManagerArgs: []string{"--nodeslice-namespace=kube-system", "--nodeslice-release-grace=2s",
				"--ip-reconciler-grace=3s", "--ip-reconciler-resync=5s"}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		allowWhereaboutsControlLoop(ctx, env.Client)
		kubeconfig := restrictedPlugin(ctx, env, dir)
		rw.conf = []byte(fmt.Sprintf(`{"cniVersion":"1.1.0","name":%q,"type":"macvlan","ipam":{"type":"rackwire",`+
			`"range":"10.96.0.0/16","node_slice_size":"/24","network_name":%q,"kubernetes":{"kubeconfig":%q},"state_dir":%q}}`,
			network, network, kubeconfig, filepath.Join(dir, "state")))
		for i := range 10 {
			nodes = append(nodes, fmt.Sprintf("churn-n%d", i))
			Expect(env.Client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodes[i]}})).To(Succeed())
		}
		Expect(env.Client.Create(ctx, &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: network},
			Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: string(rw.conf)}})).To(Succeed())
		Eventually(func(g Gomega) {
			p := &nodeslicev1alpha1.NodeSlicePool{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: network}, p)).To(Succeed())
			sliced := map[string]bool{}
			for _, a := range p.Status.Allocations {
				sliced[a.NodeName] = true
			}
			for _, n := range nodes {
				g.Expect(sliced).To(HaveKey(n))
			}
		}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
		// whereabouts' ip-control-loop on some of the nodes, the deleted one among them.
		for _, n := range []string{nodes[0], nodes[1], nodes[9]} {
			controlLoop(ctx, env, bins, dir, n, "kube-system")
		}
	})

	It("hands no address to two pods and leaves nothing without a live holder", func() {
		ch := &churn{c: env.Client, ns: "kube-system", prefix: network, nodes: nodes, pods: churnPods(), keep: 8, killNode: nodes[9],
			plugin: func(int) (ipamBin, string) { return rw, network }}
		start := time.Now()
		seed := time.Now().UnixNano()
		left := ch.run(ctx, seed)
		GinkgoWriter.Printf("churn (seed %d): %s in %s\n", seed, ch.String(), time.Since(start).Round(time.Second))
		Expect(ch.ledger.failures()).To(BeEmpty(), "addresses answered to two pods")
		Expect(ch.sampleFailures).To(BeEmpty(), "addresses recorded for two pods that were answered them")
		Expect(ch.samples).To(BeNumerically(">=", 3), "the pools were sampled during the churn")
		Expect(ch.skipped).To(BeNumerically(">", 0), "some DELs never came")
		Expect(ch.gone).To(BeNumerically(">", 0), "the deleted node had pods")
		settled(ctx, env.Client, "kube-system", network, left, 2*time.Minute)
	})
})
