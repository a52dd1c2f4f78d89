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
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

func addr(s string) *ipamv1alpha1.IPAddressStr {
	return ptr.To(ipamv1alpha1.IPAddressStr(s))
}

func subnet(s string) *ipamv1alpha1.IPSubnetStr {
	return ptr.To(ipamv1alpha1.IPSubnetStr(s))
}

// rangeOf is a pool entry from start to end inside a /24 with its gateway at .1.
func rangeOf(start, end, sub, gw string) ipamv1alpha1.Pool {
	return ipamv1alpha1.Pool{Start: addr(start), End: addr(end), Subnet: subnet(sub), Gateway: addr(gw), Prefix: 24}
}

func newPool(ns, name string, entries ...ipamv1alpha1.Pool) *ipamv1alpha1.IPPool {
	p := &ipamv1alpha1.IPPool{}
	p.Namespace, p.Name = ns, name
	p.Spec.NamePrefix = name
	p.Spec.Pools = entries
	return p
}

func newClaim(ns, name, pool string) *ipamv1alpha1.IPClaim {
	c := &ipamv1alpha1.IPClaim{}
	c.Namespace, c.Name = ns, name
	c.Spec.Pool = corev1.ObjectReference{Name: pool}
	return c
}

func newCAPIClaim(ns, name, pool string) *capiipamv1beta2.IPAddressClaim {
	c := &capiipamv1beta2.IPAddressClaim{}
	c.Namespace, c.Name = ns, name
	c.Spec.PoolRef = capiipamv1beta2.IPPoolReference{APIGroup: ipamv1alpha1.GroupVersion.Group, Kind: "IPPool", Name: pool}
	return c
}

// boundAddress waits until the Metal3 claim is Ready and returns its IPAddress.
func boundAddress(ns, claim string) *ipamv1alpha1.IPAddress {
	c := &ipamv1alpha1.IPClaim{}
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(k8s.Get(ctx, key(ns, claim), c)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(c.Status.Conditions, ipamv1alpha1.ConditionReady)).To(BeTrue(), "%+v", c.Status)
		g.Expect(c.Status.Address).NotTo(BeNil())
	}).Should(Succeed())
	ip := &ipamv1alpha1.IPAddress{}
	ExpectWithOffset(1, k8s.Get(ctx, key(ns, c.Status.Address.Name), ip)).To(Succeed())
	return ip
}

// boundCAPIAddress waits until the Cluster API claim is Ready and returns its IPAddress.
func boundCAPIAddress(ns, claim string) *capiipamv1beta2.IPAddress {
	c := &capiipamv1beta2.IPAddressClaim{}
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(k8s.Get(ctx, key(ns, claim), c)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(c.Status.Conditions, capiipamv1beta2.IPAddressClaimReadyCondition)).To(BeTrue(), "%+v", c.Status)
		g.Expect(c.Status.AddressRef.Name).NotTo(BeEmpty())
	}).Should(Succeed())
	ip := &capiipamv1beta2.IPAddress{}
	ExpectWithOffset(1, k8s.Get(ctx, key(ns, c.Status.AddressRef.Name), ip)).To(Succeed())
	return ip
}

// claimReason returns the reason and message of a Metal3 claim's Ready condition.
func claimReady(ns, name string) func(g Gomega) metav1.Condition {
	return func(g Gomega) metav1.Condition {
		c := &ipamv1alpha1.IPClaim{}
		g.Expect(k8s.Get(ctx, key(ns, name), c)).To(Succeed())
		cond := meta.FindStatusCondition(c.Status.Conditions, ipamv1alpha1.ConditionReady)
		g.Expect(cond).NotTo(BeNil())
		return *cond
	}
}

func capiClaimReady(ns, name string) func(g Gomega) metav1.Condition {
	return func(g Gomega) metav1.Condition {
		c := &capiipamv1beta2.IPAddressClaim{}
		g.Expect(k8s.Get(ctx, key(ns, name), c)).To(Succeed())
		cond := meta.FindStatusCondition(c.Status.Conditions, capiipamv1beta2.IPAddressClaimReadyCondition)
		g.Expect(cond).NotTo(BeNil())
		return *cond
	}
}

func poolStatus(ns, name string) func(g Gomega) ipamv1alpha1.IPPoolStatus {
	return func(g Gomega) ipamv1alpha1.IPPoolStatus {
		p := &ipamv1alpha1.IPPool{}
		g.Expect(k8s.Get(ctx, key(ns, name), p)).To(Succeed())
		return p.Status
	}
}

// eventReasons lists the reasons of the Events about one object.
func eventReasons(ns, name string) []string {
	var list corev1.EventList
	ExpectWithOffset(1, k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Namespace == ns && e.InvolvedObject.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// createCluster creates a Cluster API Cluster (the suite's minimal CRD), paused or not.
func createCluster(ns, name string, paused bool) *unstructured.Unstructured {
	cluster := &unstructured.Unstructured{}
	cluster.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	cluster.SetKind("Cluster")
	cluster.SetNamespace(ns)
	cluster.SetName(name)
	ExpectWithOffset(1, unstructured.SetNestedField(cluster.Object, paused, "spec", "paused")).To(Succeed())
	ExpectWithOffset(1, k8s.Create(ctx, cluster)).To(Succeed())
	return cluster
}

// setClusterPaused sets spec.paused of a Cluster.
func setClusterPaused(cluster *unstructured.Unstructured, paused bool) {
	EventuallyWithOffset(1, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(cluster.Object, paused, "spec", "paused"); err != nil {
			return err
		}
		return k8s.Update(ctx, cluster)
	}).Should(Succeed())
}

// claimAddresses lists the IPAddresses of both kinds that name the claim.
func claimAddresses(ns, claim string) (m3 []ipamv1alpha1.IPAddress, capi []capiipamv1beta2.IPAddress) {
	var l1 ipamv1alpha1.IPAddressList
	ExpectWithOffset(1, k8s.List(ctx, &l1, client.InNamespace(ns))).To(Succeed())
	for _, ip := range l1.Items {
		if ip.Spec.Claim.Name == claim {
			m3 = append(m3, ip)
		}
	}
	var l2 capiipamv1beta2.IPAddressList
	ExpectWithOffset(1, k8s.List(ctx, &l2, client.InNamespace(ns))).To(Succeed())
	for _, ip := range l2.Items {
		if ip.Spec.ClaimRef.Name == claim {
			capi = append(capi, ip)
		}
	}
	return m3, capi
}

// addressCount counts the IPAddresses of both kinds in the namespace.
func addressCount(g Gomega, ns string) int {
	var l1 ipamv1alpha1.IPAddressList
	g.Expect(k8s.List(ctx, &l1, client.InNamespace(ns))).To(Succeed())
	var l2 capiipamv1beta2.IPAddressList
	g.Expect(k8s.List(ctx, &l2, client.InNamespace(ns))).To(Succeed())
	return len(l1.Items) + len(l2.Items)
}
