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

package ipreconciler_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	virtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
	"github.com/rackwire/rackwire/internal/controller/ipreconciler/holder"
)

// network is a rackwire network of the tests: its network_name and range.
type network struct {
	name  string
	rng   netip.Prefix
	slice string
}

// createNAD writes a NAD whose bridge plugin uses rackwire's IPAM, with extra ipam keys.
func (n network) createNAD(persistent bool, extra string) {
	config := fmt.Sprintf(`{"cniVersion":"1.0.0","name":%q,"type":"bridge","bridge":"br1","allowPersistentIPs":%v,"ipam":{"type":"rackwire","range":%q,"network_name":%q%s}}`,
		n.name, persistent, n.rng, n.name, extra)
	ExpectWithOffset(1, k8s.Create(ctx, &nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: netNS},
		Spec:       nadv1.NetworkAttachmentDefinitionSpec{Config: config},
	})).To(Succeed())
}

// createPod writes a pod running on a Node.
func createPod(name, nodeName string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNS},
		Spec:       corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
	ExpectWithOffset(1, k8s.Create(ctx, pod)).To(Succeed())
	return pod
}

func deletePod(pod *corev1.Pod) {
	ExpectWithOffset(1, k8s.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	EventuallyWithOffset(1, gone(pod)).Should(BeTrue())
}

// record is one address of a pod, written as the CNI plugin writes it: the reservation
// first, then the allocation in the pool (the node's slice pool when node is set).
type record struct {
	net       network
	pool      string
	poolRange netip.Prefix
	addr      netip.Addr
	alloc     nodeslicev1alpha1.IPAllocation
}

func (n network) reservationName(a netip.Addr) string { return cniconf.ReservationName(n.name, a) }

func allocate(n network, nodeName string, poolRange netip.Prefix, addr string, pod *corev1.Pod, containerID string) record {
	a := netip.MustParseAddr(addr)
	rec := record{net: n, poolRange: poolRange, addr: a, pool: cniconf.PoolName(n.name, nodeName, poolRange),
		alloc: nodeslicev1alpha1.IPAllocation{ContainerID: containerID, PodRef: pod.Namespace + "/" + pod.Name, IfName: "net1"}}
	ExpectWithOffset(1, k8s.Create(ctx, &nodeslicev1alpha1.OverlappingRangeIPReservation{
		ObjectMeta: metav1.ObjectMeta{Name: n.reservationName(a), Namespace: poolNS},
		Spec:       nodeslicev1alpha1.OverlappingRangeIPReservationSpec{ContainerID: containerID, PodRef: rec.alloc.PodRef, IfName: "net1"},
	})).To(Succeed())
	key, ok := holder.Offset(poolRange, a)
	ExpectWithOffset(1, ok).To(BeTrue())
	pool := &nodeslicev1alpha1.IPPool{}
	err := k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: rec.pool}, pool)
	if apierrors.IsNotFound(err) {
		ExpectWithOffset(1, k8s.Create(ctx, &nodeslicev1alpha1.IPPool{
			ObjectMeta: metav1.ObjectMeta{Name: rec.pool, Namespace: poolNS},
			Spec:       nodeslicev1alpha1.IPPoolSpec{Range: poolRange.String(), Allocations: map[string]nodeslicev1alpha1.IPAllocation{key: rec.alloc}},
		})).To(Succeed())
		return rec
	}
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"allocations": map[string]any{key: rec.alloc}}})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, k8s.Patch(ctx, pool, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
	return rec
}

// allocated says whether the pool still records the address for the record's container.
func (rec record) allocated() (bool, error) {
	pool := &nodeslicev1alpha1.IPPool{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: rec.pool}, pool); err != nil {
		return false, err
	}
	key, _ := holder.Offset(rec.poolRange, rec.addr)
	al, ok := pool.Spec.Allocations[key]
	return ok && al == rec.alloc, nil
}

// reservation reads the record's reservation; nil when there is none.
func (rec record) reservation() (*nodeslicev1alpha1.OverlappingRangeIPReservation, error) {
	o := &nodeslicev1alpha1.OverlappingRangeIPReservation{}
	err := k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: rec.net.reservationName(rec.addr)}, o)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return o, err
}

// state is "allocated=<bool> reserved=<bool>" of the record.
func (rec record) state() string {
	al, err := rec.allocated()
	if err != nil {
		return err.Error()
	}
	o, err := rec.reservation()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("allocated=%v reserved=%v", al, o != nil && o.Spec.ContainerID == rec.alloc.ContainerID)
}

func gone(obj client.Object) func() bool {
	return func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)) }
}

// counter reads a counter of the manager's metrics registry; 0 when the series does not
// exist yet.
func counter(name string, labels map[string]string) float64 {
	families, err := metrics.Registry.Gather()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// eventNotes lists "reason: note" of the Events about an object.
func eventNotes(ns, name string) func() string {
	return func() string {
		list := &eventsv1.EventList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				out = append(out, e.Reason+": "+e.Note)
			}
		}
		return strings.Join(out, "\n")
	}
}

// vmClaim creates a stopped VM on the network's NAD (logical network name n.name) and returns
// the IPAMClaim rackwire's VM controller makes for it, once it holds its address: only such
// claims are served.
func vmClaim(vmName string, n network) (*virtv1.VirtualMachine, *ipamclaimsv1alpha1.IPAMClaim) {
	vm := &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: vmName, Namespace: appNS},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy: ptr.To(virtv1.RunStrategyHalted),
			Template: &virtv1.VirtualMachineInstanceTemplateSpec{Spec: virtv1.VirtualMachineInstanceSpec{
				Domain: virtv1.DomainSpec{Devices: virtv1.Devices{Interfaces: []virtv1.Interface{
					{Name: n.name, InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}},
				}}},
				Networks: []virtv1.Network{{Name: n.name, NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: netNS + "/" + n.name}}}},
			}},
		},
	}
	ExpectWithOffset(1, k8s.Create(ctx, vm)).To(Succeed())
	claim := &ipamclaimsv1alpha1.IPAMClaim{}
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: appNS, Name: vmName + "." + n.name}, claim)).To(Succeed())
		g.Expect(claim.Status.IPs).To(HaveLen(1))
	}).Should(Succeed())
	return vm, claim
}
