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
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controlplane"
)

// readSamples decodes every object of config/samples, as `make dev` applies them.
func readSamples() []*unstructured.Unstructured {
	objs, err := controlplane.ReadObjects(filepath.Join(root, controlplane.SamplesDir))
	Expect(err).NotTo(HaveOccurred())
	Expect(objs).NotTo(BeEmpty())
	return objs
}

func newNamespace() string {
	ns := &corev1.Namespace{}
	ns.GenerateName = "crd-"
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

var _ = Describe("config/samples", func() {
	It("holds one sample of every kind we serve, and the apiserver accepts them all", func() {
		ns := newNamespace()
		kinds := map[string]bool{}
		for _, obj := range readSamples() {
			obj.SetNamespace(ns)
			Expect(k8s.Create(ctx, obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
			kinds[obj.GetAPIVersion()+"/"+obj.GetKind()] = true
		}
		for _, want := range []string{
			"ipam.metal3.io/v1alpha1/IPPool", "ipam.metal3.io/v1alpha1/IPClaim", "ipam.metal3.io/v1alpha1/IPAddress",
			"ipam.cluster.x-k8s.io/v1beta2/IPAddressClaim",
			"metal3.io/v1alpha1/Switch", "metal3.io/v1alpha1/AnsibleSwitch",
			"metal3.io/v1alpha1/SwitchPortConfiguration", "metal3.io/v1alpha1/SwitchResourceLimit", "metal3.io/v1alpha1/HostLink",
			"k8s.cni.cncf.io/v1/NetworkAttachmentDefinition", "whereabouts.cni.cncf.io/v1alpha1/NodeSlicePool",
			"kubevirt.io/v1/VirtualMachine",
		} {
			Expect(kinds).To(HaveKey(want))
		}
	})

	It("gets the defaults the API promises", func() {
		ns := newNamespace()
		pool := &ipamv1alpha1.IPPool{}
		pool.Name, pool.Namespace = "defaults", ns
		pool.Spec.NamePrefix = "defaults"
		Expect(k8s.Create(ctx, pool)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
		// No schema default: the schema would also default pools ip-address-manager stored
		// without a strategy, which must keep allocating sequentially. The webhook sets it on
		// create only.
		Expect(pool.Spec.AllocationStrategy).To(BeEmpty())

		sw := &networkv1alpha1.AnsibleSwitch{}
		sw.Name, sw.Namespace = "defaults", ns
		sw.Spec = networkv1alpha1.AnsibleSwitchSpec{
			OS: "eos", IP: "switch1.example.net", HostKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA"},
			CredentialsSecret: networkv1alpha1.SecretRef{Name: "creds"},
		}
		Expect(k8s.Create(ctx, sw)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sw), sw)).To(Succeed())
		Expect(sw.Spec.Port).To(Equal(int32(22)))
	})

	It("stores a SwitchPort's state machine status through the status subresource", func() {
		ns := newNamespace()
		port := &networkv1alpha1.SwitchPort{}
		port.Name, port.Namespace = "port0", ns
		port.Spec.Configuration = &networkv1alpha1.ConfigurationRef{Name: "cfg"}
		Expect(k8s.Create(ctx, port)).To(Succeed())

		port.Status.State = networkv1alpha1.StateConfiguring
		Expect(k8s.Status().Update(ctx, port)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(port), port)).To(Succeed())
		Expect(port.Status.State).To(Equal(networkv1alpha1.StateConfiguring))

		port.Status.State = "Exploding"
		err := k8s.Status().Update(ctx, port)
		Expect(fieldsOf(err)).To(ContainElement("status.state"))
	})
})
