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
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/devenv"
	"github.com/rackwire/rackwire/internal/promscrape"
)

// scrape reads the manager's metrics endpoint as Prometheus does.
func scrape(g Gomega, url string) map[string]*dto.MetricFamily {
	families, err := promscrape.Scrape(url)
	g.Expect(err).NotTo(HaveOccurred())
	return families
}

// sample is the value of the series of name whose labels include labels; it fails when
// there is no such series.
func sample(g Gomega, families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	v, err := promscrape.Sample(families, name, labels)
	g.Expect(err).NotTo(HaveOccurred())
	return v
}

// checkMetrics scrapes the manager of a `make dev` with its samples applied and compares
// every rackwire figure with what the objects say.
func checkMetrics(ctx context.Context, env *devenv.Env) {
	admin := clientFor(env.Kubeconfig)
	var nodes corev1.NodeList
	Expect(admin.List(ctx, &nodes)).To(Succeed())
	Expect(nodes.Items).To(HaveLen(3), "the sample Nodes")

	By("pools: size, used and free; claims by state; allocation latency")
	Eventually(func(g Gomega) {
		m := scrape(g, env.MetricsURL)
		pool := &ipamv1alpha1.IPPool{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "pool-1"}, pool)).To(Succeed())
		g.Expect(pool.Status.Usage).NotTo(BeNil())
		key := map[string]string{"namespace": "default", "pool": "pool-1"}
		g.Expect(sample(g, m, "rackwire_ipam_pool_size_addresses", key)).To(BeEquivalentTo(pool.Status.Usage.Total))
		// The sample claim, the sample IPAddress and the pre-allocations, as the status says.
		g.Expect(pool.Status.Usage.Used).To(BeNumerically(">=", 3))
		g.Expect(sample(g, m, "rackwire_ipam_pool_used_addresses", key)).To(BeEquivalentTo(pool.Status.Usage.Used))
		g.Expect(sample(g, m, "rackwire_ipam_pool_free_addresses", key)).To(BeEquivalentTo(pool.Status.Usage.Free))
		// A /64 less its gateway: 2^64 - 1, which no int64 status field can say.
		v6 := map[string]string{"namespace": "default", "pool": "pool-v6"}
		g.Expect(sample(g, m, "rackwire_ipam_pool_size_addresses", v6)).To(BeNumerically("~", 1.8446744073709552e19, 1e4))
		g.Expect(sample(g, m, "rackwire_ipam_pool_used_addresses", v6)).To(BeEquivalentTo(1))

		g.Expect(sample(g, m, "rackwire_ipam_claims",
			map[string]string{"namespace": "default", "pool": "pool-1", "kind": "IPClaim", "state": "bound"})).To(BeEquivalentTo(1))
		g.Expect(sample(g, m, "rackwire_ipam_claims",
			map[string]string{"namespace": "default", "pool": "pool-v6", "kind": "IPAddressClaim", "state": "bound"})).To(BeEquivalentTo(1))
		g.Expect(sample(g, m, "rackwire_ipam_allocation_duration_seconds", map[string]string{"kind": "IPClaim"})).To(BeEquivalentTo(1))
		g.Expect(sample(g, m, "rackwire_ipam_allocation_duration_seconds", map[string]string{"kind": "IPAddressClaim"})).To(BeEquivalentTo(1))
	}, 2*time.Minute, time.Second).Should(Succeed())

	By("a /64 pool reads as ~2^64 in kubectl, not as int64's 9223372036854775807")
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	Eventually(func(g Gomega) string {
		out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "get", "ippools", "-n", "default").CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(out))
		return string(out)
	}, time.Minute, time.Second).Should(And(
		MatchRegexp(`(?m)^NAME\s+CLUSTER\s+STRATEGY\s+SIZE\s+USED\s+FREE\s+READY\s+AGE$`),
		MatchRegexp(`(?m)^pool-v6\s+cluster-1\s+sequential\s+~2\^64\s+1\s+~2\^64\s+True\s`),
		Not(ContainSubstring("9223372036854775807"))))

	By("the slices of the nodes in kubectl")
	Eventually(func(g Gomega) string {
		out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "get", "nodeslicepools", "-n", "kube-system").CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(out))
		return string(out)
	}, time.Minute, time.Second).Should(And(
		MatchRegexp(`(?m)^NAME\s+RANGE\s+SLICE\s+ASSIGNED\s+FREE\s+UNSLICED\s+READY$`),
		MatchRegexp(`(?m)^storage\s+10\.20\.0\.0/16\s+/24\s+3\s+252\s+0\s+True$`)))

	By("node slices: assigned and free per network, nodes without a slice")
	Eventually(func(g Gomega) {
		m := scrape(g, env.MetricsURL)
		pool := &nodeslicev1alpha1.NodeSlicePool{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "storage"}, pool)).To(Succeed())
		g.Expect(pool.Status.FreeSlices).NotTo(BeNil())
		key := map[string]string{"network": "storage"}
		g.Expect(sample(g, m, "rackwire_nodeslice_slices", map[string]string{"network": "storage", "state": "assigned"})).To(BeEquivalentTo(len(nodes.Items)))
		g.Expect(sample(g, m, "rackwire_nodeslice_slices", map[string]string{"network": "storage", "state": "free"})).
			To(BeEquivalentTo(*pool.Status.FreeSlices))
		g.Expect(sample(g, m, "rackwire_nodeslice_nodes_without_slice", key)).To(BeEquivalentTo(0))
	}, 2*time.Minute, time.Second).Should(Succeed())

	By("persistent IPs: claims by state")
	Eventually(func(g Gomega) {
		m := scrape(g, env.MetricsURL)
		claim := &ipamclaimsv1alpha1.IPAMClaim{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "vm-blue.blue"}, claim)).To(Succeed())
		g.Expect(sample(g, m, "rackwire_ipamclaim_claims",
			map[string]string{"namespace": "default", "network": claim.Spec.Network, "state": "Allocated"})).To(BeEquivalentTo(1))
	}, 2*time.Minute, time.Second).Should(Succeed())

	By("host links: hosts waiting on their ports, as their HostLinks say")
	Eventually(func(g Gomega) {
		m := scrape(g, env.MetricsURL)
		var links networkv1alpha1.HostLinkList
		g.Expect(admin.List(ctx, &links)).To(Succeed())
		want := map[string]int{"PortsMoving": 0, "PortFailed": 0, "WiringProblem": 0}
		for _, l := range links.Items {
			if c := meta.FindStatusCondition(l.Status.Conditions, networkv1alpha1.ConditionReady); c != nil && c.Status == metav1.ConditionFalse {
				want[c.Reason]++
			}
		}
		for reason, n := range want {
			g.Expect(sample(g, m, "rackwire_hostlink_hosts_waiting", map[string]string{"reason": reason})).
				To(BeEquivalentTo(n), "reason %s", reason)
		}
		g.Expect(sample(g, m, "rackwire_hostlink_hosts_held", map[string]string{"reason": "PortFailed"})).To(BeNumerically(">=", 0))
	}, time.Minute, time.Second).Should(Succeed())

	names := []string{}
	Eventually(func(g Gomega) {
		for name := range scrape(g, env.MetricsURL) {
			if strings.HasPrefix(name, "rackwire_") {
				names = append(names, name)
			}
		}
	}).Should(Succeed())
	fmt.Fprintf(GinkgoWriter, "rackwire metrics served: %v\n", names)
}
