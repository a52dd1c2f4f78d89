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

package ipam_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// causes lists "field: message" of an Invalid error, as kubectl prints them.
func causes(err error) []string {
	ExpectWithOffset(1, apierrors.IsInvalid(err)).To(BeTrue(), "want an Invalid error, got %v", err)
	var out []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return out
}

var _ = Describe("the IPAM webhooks", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	DescribeTable("refuse an invalid IPPool with the field path",
		func(mutate func(*ipamv1alpha1.IPPool), want string) {
			p := newPool(ns, "bad", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1"))
			mutate(p)
			Expect(causes(k8s.Create(ctx, p))).To(ContainElement(ContainSubstring(want)))
		},
		Entry("start after end", func(p *ipamv1alpha1.IPPool) { p.Spec.Pools[0].End = addr("192.168.0.5") }, "spec.pools[0]"),
		Entry("range outside its subnet", func(p *ipamv1alpha1.IPPool) { p.Spec.Pools[0].End = addr("192.168.1.5") }, "spec.pools[0]"),
		Entry("two families in one entry", func(p *ipamv1alpha1.IPPool) { p.Spec.Pools[0].End = addr("fd00::5") }, "spec.pools[0]"),
		Entry("IPv4 prefix 33", func(p *ipamv1alpha1.IPPool) { p.Spec.Pools[0].Prefix = 33 }, "spec.pools[0].prefix"),
		Entry("pre-allocation outside the pool", func(p *ipamv1alpha1.IPPool) {
			p.Spec.PreAllocations = map[string]ipamv1alpha1.IPAddressStr{"c": "10.0.0.1"}
		}, "spec.preAllocations[c]: Invalid value: \"10.0.0.1\": not an address of the pool"),
		Entry("pre-allocation of the gateway", func(p *ipamv1alpha1.IPPool) {
			p.Spec.Pools[0].Start = addr("192.168.0.1")
			p.Spec.PreAllocations = map[string]ipamv1alpha1.IPAddressStr{"c": "192.168.0.1"}
		}, "spec.preAllocations[c]"),
		Entry("two claims pre-allocated one address", func(p *ipamv1alpha1.IPPool) {
			p.Spec.PreAllocations = map[string]ipamv1alpha1.IPAddressStr{"a": "192.168.0.11", "b": "192.168.0.11"}
		}, "spec.preAllocations[b]: Duplicate value"),
		Entry("a gateway outside its entry's network", func(p *ipamv1alpha1.IPPool) {
			p.Spec.Pools[0].Subnet = nil
			p.Spec.Pools[0].Gateway = addr("10.0.0.1")
		}, "spec.pools[0].gateway: Invalid value: \"10.0.0.1\": outside the network 192.168.0.0/24"),
		Entry("the pool's gateway outside an entry's network", func(p *ipamv1alpha1.IPPool) {
			p.Spec.Pools[0].Gateway = nil
			p.Spec.Gateway = addr("192.168.7.1")
		}, "spec.gateway: Invalid value: \"192.168.7.1\""),
		Entry("an entry with no prefix anywhere", func(p *ipamv1alpha1.IPPool) {
			p.Spec.Pools[0] = ipamv1alpha1.Pool{Start: addr("192.168.0.10"), End: addr("192.168.0.20")}
		}, "spec.pools[0].prefix: Required value"),
		Entry("a range wider than its prefix", func(p *ipamv1alpha1.IPPool) {
			p.Spec.Pools[0] = ipamv1alpha1.Pool{Start: addr("192.168.0.10"), End: addr("192.168.1.20"), Prefix: 24}
		}, "spec.pools[0]: Invalid value: \"192.168.0.10-192.168.1.20\": the range is wider than its network 192.168.0.0/24"),
		Entry("no entries", func(p *ipamv1alpha1.IPPool) { p.Spec.Pools = nil }, "spec.pools: Required value"),
		Entry("overlapping entries", func(p *ipamv1alpha1.IPPool) {
			p.Spec.Pools = append(p.Spec.Pools, rangeOf("192.168.0.15", "192.168.0.30", "192.168.0.0/24", "192.168.0.1"))
		}, "spec.pools[1]: Invalid value: \"192.168.0.15-192.168.0.30 in 192.168.0.0/24\": overlaps spec.pools[0]"),
		Entry("IPv4 and IPv6 entries in one pool", func(p *ipamv1alpha1.IPPool) {
			p.Spec.Pools = append(p.Spec.Pools, ipamv1alpha1.Pool{Subnet: subnet("fd00::/120"), Prefix: 120})
		}, "spec.pools[1]: Invalid value: \"fd00::/120\": an IPv6 entry in a pool of IPv4 entries"),
		Entry("an IPv6 DNS server on an IPv4 entry", func(p *ipamv1alpha1.IPPool) {
			p.Spec.Pools[0].DNSServers = []ipamv1alpha1.IPAddressStr{"192.168.0.2", "fd00::53"}
		}, "spec.pools[0].dnsServers[1]: Invalid value: \"fd00::53\": an IPv6 DNS server for the IPv4 addresses of spec.pools[0]"),
		Entry("an IPv4 default DNS server of an IPv6 entry", func(p *ipamv1alpha1.IPPool) {
			p.Spec.Pools = []ipamv1alpha1.Pool{{Subnet: subnet("fd00::/120"), Prefix: 120}}
			p.Spec.Gateway = nil
			p.Spec.DNSServers = []ipamv1alpha1.IPAddressStr{"192.168.0.2"}
		}, "spec.dnsServers[0]: Invalid value: \"192.168.0.2\": an IPv4 DNS server for the IPv6 addresses of spec.pools[0]"),
	)

	It("never refuse a metadata-only update, nor one that keeps every allocated address, pre-allocations included", func() {
		p := newPool(ns, "pre-out", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		p.Spec.PreAllocations = map[string]ipamv1alpha1.IPAddressStr{"bmc": "192.168.0.99"}
		Expect(k8s.Create(ctx, p)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "bmc", "pre-out"))).To(Succeed())
		Expect(boundAddress(ns, "bmc").Spec.Address).To(BeEquivalentTo("192.168.0.99"))
		// The pool controller writes the pool too: retry the conflicts.
		update := func(mutate func(*ipamv1alpha1.IPPool)) error {
			for {
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
				mutate(p)
				if err := k8s.Update(ctx, p); !apierrors.IsConflict(err) {
					return err
				}
			}
		}
		Expect(update(func(p *ipamv1alpha1.IPPool) { p.Labels = map[string]string{"team": "infra"} })).To(Succeed())
		Expect(update(func(p *ipamv1alpha1.IPPool) { p.Spec.Pools[0].End = addr("192.168.0.12") })).To(Succeed())
		Expect(causes(update(func(p *ipamv1alpha1.IPPool) { p.Spec.PreAllocations = nil }))).To(
			ContainElement(ContainSubstring("address 192.168.0.99 is allocated")))
	})

	It("keep namePrefix, and every allocated address, in an IPPool", func() {
		p := newPool(ns, "keep", rangeOf("192.168.0.10", "192.168.0.11", "192.168.0.0/24", "192.168.0.1"))
		p.Spec.AllocationStrategy = ipamv1alpha1.AllocationSequential
		Expect(k8s.Create(ctx, p)).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "c", "keep"))).To(Succeed())
		Expect(boundAddress(ns, "c").Spec.Address).To(BeEquivalentTo("192.168.0.10"))

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		p.Spec.NamePrefix = "renamed"
		Expect(causes(k8s.Update(ctx, p))).To(ContainElement(ContainSubstring("spec.namePrefix: Forbidden")))

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		p.Spec.Pools[0].Start = addr("192.168.0.11")
		Expect(causes(k8s.Update(ctx, p))).To(ContainElement(ContainSubstring("address 192.168.0.10 is allocated")))

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		p.Spec.Pools[0].End = addr("192.168.0.30")
		Expect(k8s.Update(ctx, p)).To(Succeed(), "growing is fine")
	})

	It("keep the specs of claims and addresses of both kinds as created", func() {
		Expect(k8s.Create(ctx, newPool(ns, "p", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		Expect(k8s.Create(ctx, newPool(ns, "q", rangeOf("192.168.0.10", "192.168.0.20", "192.168.0.0/24", "192.168.0.1")))).To(Succeed())
		Expect(k8s.Create(ctx, newClaim(ns, "m3", "p"))).To(Succeed())
		Expect(k8s.Create(ctx, newCAPIClaim(ns, "capi", "p"))).To(Succeed())
		ip := boundAddress(ns, "m3")
		cip := boundCAPIAddress(ns, "capi")

		c := &ipamv1alpha1.IPClaim{}
		Expect(k8s.Get(ctx, key(ns, "m3"), c)).To(Succeed())
		c.Spec.Pool.Name = "q"
		Expect(causes(k8s.Update(ctx, c))).To(ContainElement(ContainSubstring("spec: Forbidden: is immutable")))

		cc := &capiipamv1beta2.IPAddressClaim{}
		Expect(k8s.Get(ctx, key(ns, "capi"), cc)).To(Succeed())
		cc.Spec.PoolRef.Name = "q"
		Expect(causes(k8s.Update(ctx, cc))).To(ContainElement(ContainSubstring("spec: Forbidden: is immutable")))

		By("leaving the claims of other IPAM providers to them")
		foreign := newCAPIClaim(ns, "foreign", "p")
		foreign.Spec.PoolRef.APIGroup, foreign.Spec.PoolRef.Kind = "ipam.cluster.x-k8s.io", "InClusterIPPool"
		Expect(k8s.Create(ctx, foreign)).To(Succeed())
		foreign.Spec.PoolRef.Name = "other"
		Expect(k8s.Update(ctx, foreign)).To(Succeed())

		// Any other address of the range: the allocation is random.
		other := func(a string) string {
			if a == "192.168.0.19" {
				return "192.168.0.18"
			}
			return "192.168.0.19"
		}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ip), ip)).To(Succeed())
		ip.Spec.Address = ipamv1alpha1.IPAddressStr(other(string(ip.Spec.Address)))
		Expect(causes(k8s.Update(ctx, ip))).To(ContainElement(ContainSubstring("spec: Forbidden: is immutable")))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cip), cip)).To(Succeed())
		cip.Spec.Address = other(cip.Spec.Address)
		Expect(causes(k8s.Update(ctx, cip))).To(ContainElement(ContainSubstring("spec: Forbidden: is immutable")))
	})

	It("tell a kubectl user which field is wrong and why", func() {
		user, err := testEnv.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig, err := user.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		dir := GinkgoT().TempDir()
		Expect(os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "pool.yaml"), []byte(`
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata:
  name: typo
spec:
  namePrefix: typo
  pools:
    - start: 192.168.0.50
      end: 192.168.0.10
      subnet: 192.168.0.0/24
`), 0o600)).To(Succeed())
		kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
		if _, err := os.Stat(kubectl); err != nil {
			kubectl = "kubectl"
		}
		cmd := exec.Command(kubectl, "--kubeconfig", filepath.Join(dir, "kubeconfig"), "-n", ns, "apply", "-f", filepath.Join(dir, "pool.yaml"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		Expect(cmd.Run()).NotTo(Succeed())
		msg := stderr.String()
		GinkgoWriter.Println("kubectl said:", msg)
		Expect(msg).To(ContainSubstring(`IPPool "typo" is invalid`))
		Expect(msg).To(ContainSubstring(`spec.pools[0].end: Invalid value: "192.168.0.10"`))
	})
})
