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

package nodeslice

import (
	"context"
	"errors"
	"time"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/slicing"
)

// Production settings of the node-slice area, set from the manager's flags.
var (
	// Namespace is where NodeSlicePools are written and whereabouts' IPPools read: the
	// namespace of the CNI binaries' kubeconfig context (whereabouts' default kube-system).
	Namespace = "kube-system"
	// ReleaseGrace is how long a slice a node lost (Node deleted, network re-cut) stays away
	// from other nodes: a whereabouts binary that read the old pool just before finishes its
	// ADD within whereabouts' own limit (2 minutes) and its IPPool then holds the slice.
	ReleaseGrace = 2 * time.Minute
	// WriteInterval is the longest a joining Node waits for its NodeSlicePool write while
	// Nodes keep joining: every write carries the whole slice list (hundreds of KiB for
	// thousands of slices), so a burst of joins is gathered into few writes.
	WriteInterval = time.Second
	// WriteQuiet is how long Nodes must be quiet for a pool to be written at once: a lone
	// Node, or the last of a burst, waits this long, not WriteInterval.
	WriteQuiet = 100 * time.Millisecond
)

// MaxListed is the most slices status.allocations lists one by one.
const MaxListed = 8192

// networkIndex indexes NADs by the network they ask node slices of.
const networkIndex = "nodeslice.network"

// Options tune the reconciler.
type Options struct {
	Namespace     string
	ReleaseGrace  time.Duration
	WriteInterval time.Duration
	WriteQuiet    time.Duration
	Workers       int
}

// Setup registers the NodeSlicePool reconciler with the production settings.
func Setup(mgr ctrl.Manager) error {
	return SetupWith(mgr, Options{Namespace: Namespace, ReleaseGrace: ReleaseGrace, WriteInterval: WriteInterval, WriteQuiet: WriteQuiet})
}

// +kubebuilder:rbac:groups=whereabouts.cni.cncf.io,resources=nodeslicepools,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=whereabouts.cni.cncf.io,resources=ippools,verbs=get;list;watch
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=network-attachment-definitions,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// SetupWith registers the reconciler with options.
func SetupWith(mgr ctrl.Manager, o Options) error {
	if o.Namespace == "" {
		return errors.New("node slices: no namespace for NodeSlicePools")
	}
	if o.Workers == 0 {
		o.Workers = 4
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &nadv1.NetworkAttachmentDefinition{}, networkIndex,
		func(obj client.Object) []string {
			if name := networkOf(obj); name != "" {
				return []string{name}
			}
			return nil
		}); err != nil {
		return err
	}
	r := &Reconciler{
		Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("nodeslice-controller"),
		Namespace: o.Namespace, Grace: o.ReleaseGrace, WriteInterval: o.WriteInterval, WriteQuiet: o.WriteQuiet, nets: newRegistry(),
	}
	sliceMetrics.use(mgr.GetCache(), r.Namespace)
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == r.Namespace })
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodeslicepool").
		Watches(&nadv1.NetworkAttachmentDefinition{}, handler.EnqueueRequestsFromMapFunc(r.networkOfNAD)).
		Watches(&nodeslicev1alpha1.NodeSlicePool{}, r.poolEvents(), builder.WithPredicates(inNamespace)).
		Watches(&nodeslicev1alpha1.IPPool{}, r.ipPoolEvents(), builder.WithPredicates(inNamespace)).
		WatchesMetadata(&corev1.Node{}, r.nodeEvents()).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.Workers, UsePriorityQueue: ptr.To(false)}).
		Complete(r)
}

// networkOf is the network a NAD asks node slices of, "" for none (even a wrong config
// names its network when it can, so that its pool reports it).
func networkOf(obj client.Object) string {
	nad, ok := obj.(*nadv1.NetworkAttachmentDefinition)
	if !ok {
		return ""
	}
	n, err := slicing.ParseNetwork([]byte(nad.Spec.Config))
	if errors.Is(err, slicing.ErrNotSliced) {
		return ""
	}
	return n.Name
}

func (r *Reconciler) request(network string) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: r.Namespace, Name: network}}
}

func (r *Reconciler) networkOfNAD(_ context.Context, obj client.Object) []reconcile.Request {
	if name := networkOf(obj); name != "" {
		return []reconcile.Request{r.request(name)}
	}
	return nil
}
