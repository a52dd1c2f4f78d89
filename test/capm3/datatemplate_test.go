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

package capm3

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
)

// CAPM3 renders each machine's network data with an IPv4 and an IPv6 address from two
// rackwire IPPools, unique across machines, and deleting a machine's data claim (what CAPM3's
// Metal3Machine does when its machine goes) gives that machine's addresses back and no other.
func TestDataTemplateTakesAddressesFromRackwire(t *testing.T) {
	e := start(t)

	for _, p := range []string{`
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: provisioning}
spec:
  namePrefix: provisioning
  clusterName: %[1]s
  pools: [{start: 192.168.20.10, end: 192.168.20.19}]
  prefix: 24
  gateway: 192.168.20.1
`, `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: storage}
spec:
  namePrefix: storage
  clusterName: %[1]s
  pools: [{start: "fd20::10", end: "fd20::1f"}]
  prefix: 64
`} {
		e.create(t, e.obj(t, p, cluster))
	}
	e.create(t, e.obj(t, `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: %s}
spec: {paused: false}
`, cluster))
	e.create(t, e.obj(t, `
apiVersion: %s
kind: Metal3DataTemplate
metadata:
  name: workers
  labels: {cluster.x-k8s.io/cluster-name: %s}
spec:
  clusterName: %[2]s
  networkData:
    links:
      ethernets:
      - {type: phy, id: eth0, macAddress: {string: "00:5e:00:53:00:01"}}
    networks:
      ipv4:
      - {id: provisioning, link: eth0, fromPoolRef: {apiGroup: ipam.metal3.io, kind: IPPool, name: provisioning}}
      ipv6:
      - {id: storage, link: eth0, fromPoolRef: {apiGroup: ipam.metal3.io, kind: IPPool, name: storage}}
`, infra, cluster))

	for i := range machines {
		e.machine(t, i)
	}

	// Every machine's network data secret, as CAPM3 renders it for the host.
	got := map[int][2]netip.Addr{}
	for i := range machines {
		eventually(t, fmt.Sprintf("machine %d's network data", i), func() (bool, error) {
			v4, v6, err := e.networkData(i)
			if err != nil {
				return false, err
			}
			got[i] = [2]netip.Addr{v4, v6}
			return true, nil
		})
	}
	t.Logf("rendered by CAPM3: %v", got)
	seen := map[netip.Addr]int{}
	for i, a := range got {
		if !netip.MustParsePrefix("192.168.20.0/24").Contains(a[0]) || !netip.MustParsePrefix("fd20::/64").Contains(a[1]) {
			t.Fatalf("machine %d rendered %v, outside its pools", i, a)
		}
		for _, ip := range a {
			if j, dup := seen[ip]; dup {
				t.Fatalf("machines %d and %d both rendered %s", j, i, ip)
			}
			seen[ip] = i
		}
	}
	// Each rendered address is one rackwire holds for that machine's claim.
	held := e.held(t)
	t.Logf("held by rackwire: %v", held)
	if len(held) != 2*machines {
		t.Fatalf("rackwire holds %d addresses, want %d: %v", len(held), 2*machines, held)
	}
	for ip := range seen {
		if !slices.Contains(held, ip) {
			t.Fatalf("%s rendered but not held by rackwire (held: %v)", ip, held)
		}
	}

	// Machine 0 goes: CAPM3 deletes its Metal3Data, releases its claims, rackwire frees.
	claim := &unstructured.Unstructured{}
	claim.SetAPIVersion(infra)
	claim.SetKind("Metal3DataClaim")
	claim.SetNamespace(e.ns)
	claim.SetName("m3m-0")
	if err := e.k8s.Delete(e.ctx, claim); err != nil {
		t.Fatal(err)
	}
	eventually(t, "machine 0's addresses back in their pools", func() (bool, error) {
		h := e.heldNow()
		return len(h) == 2*(machines-1) && !slices.Contains(h, got[0][0]) && !slices.Contains(h, got[0][1]), nil
	})
	eventually(t, "machine 0's Metal3DataClaim gone", func() (bool, error) {
		err := e.k8s.Get(e.ctx, client.ObjectKeyFromObject(claim), claim)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	for i := 1; i < machines; i++ {
		v4, v6, err := e.networkData(i)
		if err != nil || v4 != got[i][0] || v6 != got[i][1] {
			t.Fatalf("machine %d after machine 0 went: %v %v %v, want %v", i, v4, v6, err, got[i])
		}
		h := e.heldNow()
		if !slices.Contains(h, got[i][0]) || !slices.Contains(h, got[i][1]) {
			t.Fatalf("machine %d's addresses %v no longer held: %v", i, got[i], h)
		}
	}
}

// machine creates what Cluster API, BMO and CAPM3's Metal3Machine controller would have
// written for machine i: a BareMetalHost, a Machine owning a Metal3Machine bound to the host,
// and the Metal3DataClaim the Metal3Machine makes for its data template.
func (e *env) machine(t *testing.T, i int) {
	t.Helper()
	e.create(t, e.obj(t, `
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata: {name: host-%d}
spec: {online: false}
`, i))
	m := e.obj(t, `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: machine-%[1]d
  labels: {cluster.x-k8s.io/cluster-name: %[2]s}
spec:
  clusterName: %[2]s
  bootstrap: {dataSecretName: bootstrap}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Machine, name: m3m-%[1]d}
`, i, cluster)
	e.create(t, m)
	m3m := e.obj(t, `
apiVersion: %[3]s
kind: Metal3Machine
metadata:
  name: m3m-%[1]d
  labels: {cluster.x-k8s.io/cluster-name: %[2]s}
  annotations: {metal3.io/BareMetalHost: %[4]s/host-%[1]d}
  ownerReferences:
  - {apiVersion: cluster.x-k8s.io/v1beta2, kind: Machine, name: machine-%[1]d, uid: %[5]s}
spec:
  dataTemplate: {name: workers}
  image: {url: "http://images.example/node.qcow2", checksum: "http://images.example/node.qcow2.sha256"}
`, i, cluster, infra, e.ns, m.GetUID())
	e.create(t, m3m)
	e.create(t, e.obj(t, `
apiVersion: %[3]s
kind: Metal3DataClaim
metadata:
  name: m3m-%[1]d
  labels: {cluster.x-k8s.io/cluster-name: %[2]s}
  ownerReferences:
  - {apiVersion: %[3]s, kind: Metal3Machine, name: m3m-%[1]d, uid: %[4]s}
spec:
  template: {name: workers}
`, i, cluster, infra, m3m.GetUID()))
}

// networkData reads the network data secret CAPM3 rendered for machine i and returns its
// IPv4 and IPv6 addresses.
func (e *env) networkData(i int) (v4, v6 netip.Addr, err error) {
	s := &corev1.Secret{}
	if err := e.k8s.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: fmt.Sprintf("m3m-%d-networkdata", i)}, s); err != nil {
		return v4, v6, err
	}
	var nd struct {
		Networks []struct {
			ID        string `json:"id"`
			Type      string `json:"type"`
			IPAddress string `json:"ip_address"`
		} `json:"networks"`
	}
	if err := sigsyaml.Unmarshal(s.Data["networkData"], &nd); err != nil {
		return v4, v6, err
	}
	for _, n := range nd.Networks {
		a, err := netip.ParseAddr(n.IPAddress)
		if err != nil {
			return v4, v6, fmt.Errorf("network %s: %w (%s)", n.ID, err, s.Data["networkData"])
		}
		switch n.ID {
		case "provisioning":
			v4 = a
		case "storage":
			v6 = a
		}
	}
	if !v4.IsValid() || !v6.IsValid() {
		return v4, v6, fmt.Errorf("network data lacks an address: %s", s.Data["networkData"])
	}
	return v4, v6, nil
}

// heldNow lists the addresses rackwire's IPAddresses hold in the test's namespace.
func (e *env) heldNow() []netip.Addr {
	var list ipamv1alpha1.IPAddressList
	if err := e.k8s.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range list.Items {
		if ip, err := netip.ParseAddr(strings.TrimSpace(string(a.Spec.Address))); err == nil {
			out = append(out, ip)
		}
	}
	return out
}

func (e *env) held(t *testing.T) []netip.Addr {
	t.Helper()
	var list ipamv1alpha1.IPAddressList
	if err := e.k8s.List(e.ctx, &list, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	return e.heldNow()
}
