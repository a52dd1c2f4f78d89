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

package hostlink

import (
	"context"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Field indexes of the host-link controller.
const (
	// IndexLinkedPort keys HostLinks by the SwitchPorts in their status.
	IndexLinkedPort = "rackwire.linkedPort"
	// IndexPortHolder keys SwitchPorts by the UID of the HostLink their holder record names.
	IndexPortHolder = "rackwire.portHolder"
	// IndexConsumer keys BareMetalHosts by their consumer, "namespace/name".
	IndexConsumer = "rackwire.consumer"
)

func linkedPortKeys(o client.Object) []string {
	var out []string
	for _, p := range o.(*networkv1alpha1.HostLink).Status.Ports {
		out = append(out, p.SwitchPort.Namespace+"/"+p.SwitchPort.Name)
	}
	return out
}

func consumerKeys(o client.Object) []string {
	h := o.(*metal3v1alpha1.BareMetalHost)
	ref := h.Spec.ConsumerRef
	if ref == nil || ref.Kind != Metal3MachineGVK.Kind {
		return nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = h.Namespace
	}
	return []string{ns + "/" + ref.Name}
}

// Setup registers the host-link controller. It needs BMO's BareMetalHost CRD; CAPM3's
// Metal3Machine is watched when the cluster serves it.
func Setup(mgr ctrl.Manager) error {
	ctx := context.Background()
	bmh := metal3v1alpha1.GroupVersion.WithKind("BareMetalHost")
	if _, err := mgr.GetRESTMapper().RESTMapping(bmh.GroupKind(), bmh.Version); err != nil {
		// A cluster without BMO has no hosts to link; the rest of rackwire runs.
		ctrl.Log.WithName("hostlink").Info("BareMetalHost is not served: host links are off until the manager restarts with BMO's CRDs", "reason", err.Error())
		return nil
	}
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &networkv1alpha1.Switch{}, IndexChassis, chassisKeys); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &networkv1alpha1.HostLink{}, IndexLinkedPort, linkedPortKeys); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &networkv1alpha1.HostLink{}, IndexEntryPort, entryPortKeys); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &networkv1alpha1.SwitchPort{}, IndexPortHolder, holderKeys); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &metal3v1alpha1.BareMetalHost{}, IndexConsumer, consumerKeys); err != nil {
		return err
	}
	linkMetrics.Use(mgr.GetCache())
	c := mgr.GetClient()
	r := &Reconciler{Client: c, Recorder: mgr.GetEventRecorder("hostlink-controller"), Recheck: time.Minute}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&metal3v1alpha1.BareMetalHost{}).
		Watches(&networkv1alpha1.HostLink{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return contenders(ctx, c, o.(*networkv1alpha1.HostLink))
		})).
		Watches(&networkv1alpha1.SwitchPort{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return hostsBy(ctx, c, &networkv1alpha1.HostLinkList{}, IndexLinkedPort, o)
		})).
		Watches(&networkv1alpha1.Switch{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
			return inspected(ctx, c)
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 8, UsePriorityQueue: ptr.To(false)})
	if servedKind(mgr.GetRESTMapper(), HostNetworkAttachmentGVK) {
		a := &unstructured.Unstructured{}
		a.SetGroupVersionKind(HostNetworkAttachmentGVK)
		b = b.Watches(a, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
			return linked(ctx, c)
		}))
	}
	if servedKind(mgr.GetRESTMapper(), Metal3MachineGVK) {
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(Metal3MachineGVK)
		b = b.Watches(m, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return hostsBy(ctx, c, &metal3v1alpha1.BareMetalHostList{}, IndexConsumer, o)
		}))
		// clusterctl move pauses the Cluster: its hosts' holds are neither taken nor lifted
		// meanwhile, and an unpause must let them go at once, not at the next recheck.
		for _, v := range clusterVersions {
			gvk := schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: v, Kind: "Cluster"}
			if !servedKind(mgr.GetRESTMapper(), gvk) {
				continue
			}
			cl := &unstructured.Unstructured{}
			cl.SetGroupVersionKind(gvk)
			b = b.Watches(cl, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
				return clusterHosts(ctx, c, o)
			}))
			break
		}
	}
	return b.Complete(r)
}

// clusterHosts are the hosts consumed by the Cluster's Metal3Machines (CAPI labels them with
// the Cluster's name).
func clusterHosts(ctx context.Context, c client.Reader, cluster client.Object) []reconcile.Request {
	machines := &unstructured.UnstructuredList{}
	machines.SetGroupVersionKind(Metal3MachineGVK.GroupVersion().WithKind(Metal3MachineGVK.Kind + "List"))
	if err := c.List(ctx, machines, client.InNamespace(cluster.GetNamespace()),
		client.MatchingLabels{capiClusterNameLabel: cluster.GetName()}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range machines.Items {
		out = append(out, hostsBy(ctx, c, &metal3v1alpha1.BareMetalHostList{}, IndexConsumer, &machines.Items[i])...)
	}
	return out
}

// servedKind says whether the cluster serves a kind of another project (CAPM3's Metal3Machine,
// a newer BMO's HostNetworkAttachment); without it there is nothing of it to watch.
func servedKind(m meta.RESTMapper, gvk schema.GroupVersionKind) bool {
	_, err := m.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// linked are the hosts rackwire links (they carry its finalizer): a HostNetworkAttachment
// changing may change what their ports carry.
func linked(ctx context.Context, c client.Reader) []reconcile.Request {
	hosts := &metal3v1alpha1.BareMetalHostList{}
	if err := c.List(ctx, hosts); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range hosts.Items {
		if controllerutil.ContainsFinalizer(&hosts.Items[i], Finalizer) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&hosts.Items[i])})
		}
	}
	return out
}

// contenders are the host of the HostLink and every host whose HostLink lists one of its
// ports: a port let go, or named by the infra team, changes who holds it.
func contenders(ctx context.Context, c client.Reader, l *networkv1alpha1.HostLink) []reconcile.Request {
	out := []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(l)}}
	keys := map[string]bool{}
	for _, k := range linkedPortKeys(l) {
		keys[k] = true
	}
	for _, k := range entryPortKeys(l) {
		keys[k] = true
	}
	for k := range keys {
		links := &networkv1alpha1.HostLinkList{}
		if err := c.List(ctx, links, client.MatchingFields{IndexLinkedPort: k}); err != nil {
			continue
		}
		for i := range links.Items {
			if links.Items[i].UID != l.UID {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&links.Items[i])})
			}
		}
	}
	return out
}

// hostsBy lists the objects indexed under o's key and enqueues the hosts of the same names.
func hostsBy(ctx context.Context, c client.Reader, list client.ObjectList, index string, o client.Object) []reconcile.Request {
	if err := c.List(ctx, list, client.MatchingFields{index: o.GetNamespace() + "/" + o.GetName()}); err != nil {
		return nil
	}
	var out []reconcile.Request
	_ = meta.EachListItem(list, func(item runtime.Object) error {
		obj := item.(client.Object)
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		return nil
	})
	return out
}

// inspected are the hosts whose inspection saw an LLDP neighbour: a Switch's chassis MAC or
// ports changing may wire them.
func inspected(ctx context.Context, c client.Reader) []reconcile.Request {
	hosts := &metal3v1alpha1.BareMetalHostList{}
	if err := c.List(ctx, hosts); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range hosts.Items {
		h := &hosts.Items[i]
		if hw := h.Status.HardwareDetails; hw != nil {
			for _, n := range hw.NIC {
				if n.LLDP != nil && n.LLDP.SwitchID != "" {
					out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(h)})
					break
				}
			}
		}
	}
	return out
}
