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

package crd

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// fieldsOf lists the field paths an Invalid error names, which is what kubectl prints.
func fieldsOf(err error) []string {
	ExpectWithOffset(1, apierrors.IsInvalid(err)).To(BeTrue(), "want an Invalid error, got %v", err)
	var fields []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	return fields
}

func fromYAML(doc string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	ExpectWithOffset(1, yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
	return u
}

var _ = Describe("an invalid object", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// field is the path kubectl prints before the reason; empty where the apiserver has none.
	DescribeTable("is refused with the field path and the reason",
		func(doc, field, reason string) {
			obj := fromYAML(doc)
			obj.SetNamespace(ns)
			err := k8s.Create(ctx, obj)
			Expect(err).To(HaveOccurred())
			if field != "" {
				Expect(fieldsOf(err)).To(ContainElement(field), err.Error())
			}
			Expect(err.Error()).To(ContainSubstring(reason))
		},
		Entry("untagged VLAN 5000", `
apiVersion: metal3.io/v1alpha1
kind: SwitchPortConfiguration
metadata: {name: vlan5000}
spec: {untaggedVLAN: 5000}`, "spec.untaggedVLAN", "less than or equal to 4094"),
		Entry("untagged VLAN 0", `
apiVersion: metal3.io/v1alpha1
kind: SwitchPortConfiguration
metadata: {name: vlan0}
spec: {untaggedVLAN: 0}`, "spec.untaggedVLAN", "greater than or equal to 1"),
		Entry("tagged VLAN range reaching 5000", `
apiVersion: metal3.io/v1alpha1
kind: SwitchPortConfiguration
metadata: {name: range5000}
spec: {vlans: "2-10, 4000-5000"}`, "spec.vlans", "should match"),
		Entry("ACL port 70000", `
apiVersion: metal3.io/v1alpha1
kind: SwitchPortConfiguration
metadata: {name: acl}
spec:
  acl: [{type: ipv4, action: allow, protocol: TCP, desPortRange: "70000"}]`, "spec.acl[0].desPortRange", "should match"),
		Entry("ACL source that is not a CIDR", `
apiVersion: metal3.io/v1alpha1
kind: SwitchPortConfiguration
metadata: {name: aclsrc}
spec:
  acl: [{type: ipv4, action: deny, protocol: ALL, src: "10.0.0.0/33"}]`, "spec.acl[0].src", "must be a valid CIDR"),
		Entry("ACL protocol outside the enum", `
apiVersion: metal3.io/v1alpha1
kind: SwitchPortConfiguration
metadata: {name: aclproto}
spec:
  acl: [{type: ipv4, action: deny, protocol: SCTP}]`, "spec.acl[0].protocol", "Unsupported value"),
		Entry("switch port VLAN range with VLAN 0", `
apiVersion: metal3.io/v1alpha1
kind: Switch
metadata: {name: sw}
spec:
  provider: {kind: AnsibleSwitch, name: p}
  ports:
    port-a: {name: swp1, vlanRange: "0-10"}`, "spec.ports.port-a.vlanRange", "should match"),
		Entry("switch port key that cannot name a SwitchPort", `
apiVersion: metal3.io/v1alpha1
kind: Switch
metadata: {name: swkey}
spec:
  provider: {kind: AnsibleSwitch, name: p}
  clean: {parkingVLAN: 4000}
  ports:
    Port_A: {name: swp1}`, "spec.ports", "valid SwitchPort object names"),
		Entry("switch provider of an unknown kind", `
apiVersion: metal3.io/v1alpha1
kind: Switch
metadata: {name: swprov}
spec:
  provider: {kind: NetconfSwitch, name: p}
  clean: {parkingVLAN: 4000}`, "spec.provider.kind", "Unsupported value"),
		Entry("switch with no parking VLAN", `
apiVersion: metal3.io/v1alpha1
kind: Switch
metadata: {name: swpark}
spec:
  provider: {kind: AnsibleSwitch, name: p}
  clean: {mode: deconfigured}`, "spec.clean.parkingVLAN", "never left on the switch's default"),
		Entry("Ansible switch with an OS network-runner does not know", `
apiVersion: metal3.io/v1alpha1
kind: AnsibleSwitch
metadata: {name: fos}
spec: {os: fos, ip: 10.0.0.1, insecureIgnoreHostKey: true, credentialsSecret: {name: c}}`, "spec.os", "os fos is not supported: rackwire drives switches with the network-runner role"),
		Entry("Open vSwitch without a bridge", `
apiVersion: metal3.io/v1alpha1
kind: AnsibleSwitch
metadata: {name: ovs}
spec: {os: openvswitch, ip: 10.0.0.1, insecureIgnoreHostKey: true, credentialsSecret: {name: c}}`, "spec.bridge", "bridge is required"),
		Entry("Ansible switch SSH port 0", `
apiVersion: metal3.io/v1alpha1
kind: AnsibleSwitch
metadata: {name: port0}
spec: {os: eos, ip: 10.0.0.1, port: 0, insecureIgnoreHostKey: true, credentialsSecret: {name: c}}`, "spec.port", "greater than or equal to 1"),
		Entry("Ansible switch without a host-key policy", `
apiVersion: metal3.io/v1alpha1
kind: AnsibleSwitch
metadata: {name: nokey}
spec: {os: eos, ip: 10.0.0.1, credentialsSecret: {name: c}}`, "spec.hostKeys", "set exactly one of hostKeys"),
		Entry("Ansible switch with both host keys and none checked", `
apiVersion: metal3.io/v1alpha1
kind: AnsibleSwitch
metadata: {name: twokey}
spec: {os: eos, ip: 10.0.0.1, hostKeys: ["ssh-ed25519 AAAA"], insecureIgnoreHostKey: true, credentialsSecret: {name: c}}`, "spec.hostKeys", "set exactly one of hostKeys"),
		Entry("Ansible switch host key with a host name in front", `
apiVersion: metal3.io/v1alpha1
kind: AnsibleSwitch
metadata: {name: badkey}
spec: {os: eos, ip: 10.0.0.1, hostKeys: ["sw1 ssh-ed25519 AAAA"], credentialsSecret: {name: c}}`, "spec.hostKeys[0]", "should match"),
		Entry("resource limit not named user-limit", `
apiVersion: metal3.io/v1alpha1
kind: SwitchResourceLimit
metadata: {name: my-limit}
spec: {vlanRange: "2-10"}`, "", "metadata.name must be user-limit"),
		Entry("resource limit with VLAN 4095", `
apiVersion: metal3.io/v1alpha1
kind: SwitchResourceLimit
metadata: {name: user-limit}
spec: {vlanRange: "4095"}`, "spec.vlanRange", "should match"),
		Entry("pool start with junk around an address", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: junk}
spec:
  namePrefix: junk
  pools: [{start: "x192.168.0.10y", end: 192.168.0.20}]`, "spec.pools[0].start", "should match '^"),
		Entry("pool end with an IPv4 octet above 255", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: octet}
spec:
  namePrefix: octet
  pools: [{start: 192.168.0.10, end: 192.168.0.256}]`, "spec.pools[0].end", "must be a valid IPv4 or IPv6 address"),
		Entry("pool gateway that only looks like IPv6", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: v6shape}
spec:
  namePrefix: v6shape
  gateway: "1:2:3"`, "spec.gateway", "must be a valid IPv4 or IPv6 address"),
		Entry("pool subnet with prefix 33", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: subnet}
spec:
  namePrefix: subnet
  pools: [{subnet: 192.168.0.0/33}]`, "spec.pools[0].subnet", "must be a valid CIDR"),
		Entry("pool without namePrefix", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: noprefix}
spec:
  pools: [{subnet: 192.168.0.0/24}]`, "spec.namePrefix", "Required value"),
		Entry("pool with an unknown allocation strategy", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: strategy}
spec: {namePrefix: strategy, allocationStrategy: roundrobin}`, "spec.allocationStrategy", "Unsupported value"),
		Entry("pool pre-allocation that is not an address", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: prealloc}
spec:
  namePrefix: prealloc
  preAllocations: {claim-1: not-an-ip}`, "spec.preAllocations[claim-1]", "should match"),
		Entry("pool exclusion that is not a range", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: exclude}
spec:
  namePrefix: exclude
  excludedAddresses: ["10.0.0.1 to 10.0.0.9"]`, "spec.excludedAddresses[0]", "should match"),
		Entry("pool prefix 129", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: prefix}
spec: {namePrefix: prefix, prefix: 129}`, "spec.prefix", "less than or equal to 128"),
		Entry("address with a prefix glued on", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPAddress
metadata: {name: addr}
spec: {address: 10.0.0.1/24, pool: {name: p}, claim: {name: c}}`, "spec.address", "should match"),
		Entry("claim without a pool name", `
apiVersion: ipam.metal3.io/v1alpha1
kind: IPClaim
metadata: {name: claim}
spec: {pool: {kind: IPPool}}`, "spec.pool", "pool.name is required"),
		Entry("Cluster API claim without a poolRef", `
apiVersion: ipam.cluster.x-k8s.io/v1beta2
kind: IPAddressClaim
metadata: {name: capi}
spec: {}`, "spec.poolRef", "Required value"),
	)
})
