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

package ipreconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cniconf"
)

// In node-slice mode rackwire answers an ADD before its pool entry is written, trusting that
// nobody else allocates in the node's slice. A whereabouts binary on the same NodeSlicePool
// does, deciding between its reservation check and its pool write under its Lease: there
// rackwire must take that Lease and write before it answers (ipam whereabouts_lease). A
// rackwire NAD of such a network without it is refused: the manager marks the NodeSlicePool
// with the whereabouts NADs (AnnotationSharedWithWhereabouts), every ADD of a NAD without
// whereabouts_lease on it fails naming the key, and the NAD gets a Warning Event.

// AnnotationSharedWithWhereabouts lists, on a NodeSlicePool, the NADs (namespace/name) whose
// whereabouts binaries allocate from its slices.
const AnnotationSharedWithWhereabouts = cniconf.AnnotationSharedWithWhereabouts

// ReasonWhereaboutsLeaseRequired is the Warning Event on a rackwire NAD that shares its node
// slices with whereabouts without whereabouts_lease.
const ReasonWhereaboutsLeaseRequired = "WhereaboutsLeaseRequired"

// whereaboutsIndex indexes the NADs whose whereabouts binaries use node slices by their
// NodeSlicePool's name.
const whereaboutsIndex = "ipreconciler.whereabouts-slices"

// ipamSections are the ipam sections of a configuration, of the plugin or of a conflist's,
// with the configuration's name.
func ipamSections(config []byte) (string, []map[string]any) {
	var top struct {
		IPAM    map[string]any `json:"ipam"`
		Name    string         `json:"name"`
		Plugins []struct {
			IPAM map[string]any `json:"ipam"`
		} `json:"plugins"`
	}
	if json.Unmarshal(config, &top) != nil {
		return "", nil
	}
	out := []map[string]any{top.IPAM}
	for _, p := range top.Plugins {
		out = append(out, p.IPAM)
	}
	return top.Name, out
}

// sliceNameOf is the NodeSlicePool a configuration of ipam type typ in node-slice mode
// allocates from (network_name, else the configuration's name), false when it is none.
func sliceNameOf(config []byte, typ string) (string, bool) {
	name, sections := ipamSections(config)
	for _, s := range sections {
		if t, _ := s["type"].(string); t != typ {
			continue
		}
		if size, _ := s["node_slice_size"].(string); size == "" {
			return "", false
		}
		if nn, _ := s["network_name"].(string); nn != "" {
			return nn, true
		}
		return name, name != ""
	}
	return "", false
}

// leased says whether a rackwire configuration sets whereabouts_lease.
func leased(config []byte) bool {
	_, sections := ipamSections(config)
	for _, s := range sections {
		if t, _ := s["type"].(string); t == cniconf.IPAMType {
			l, _ := s["whereabouts_lease"].(bool)
			return l
		}
	}
	return false
}

func whereaboutsSlices(obj client.Object) []string {
	nad, ok := obj.(*nadv1.NetworkAttachmentDefinition)
	if !ok {
		return nil
	}
	if name, ok := sliceNameOf([]byte(nad.Spec.Config), "whereabouts"); ok {
		return []string{name}
	}
	return nil
}

// checkMixed marks the NodeSlicePools of the scope's rackwire NADs with the whereabouts NADs
// that share them, and warns on each rackwire NAD there without whereabouts_lease.
func (r *Reconciler) checkMixed(ctx context.Context, nads []nadv1.NetworkAttachmentDefinition) error {
	var errs []error
	done := map[string]bool{}
	for i := range nads {
		nad := &nads[i]
		cfg := []byte(nad.Spec.Config)
		slice, ok := sliceNameOf(cfg, cniconf.IPAMType)
		if !ok {
			continue
		}
		var wb nadv1.NetworkAttachmentDefinitionList
		if err := r.List(ctx, &wb, client.MatchingFields{whereaboutsIndex: slice}); err != nil {
			return err
		}
		var refs []string
		for _, w := range wb.Items {
			refs = append(refs, w.Namespace+"/"+w.Name)
		}
		slices.Sort(refs)
		if len(refs) > 0 && !leased(cfg) && r.warn(nad.UID, nad.ResourceVersion+"|"+strings.Join(refs, ",")) {
			r.Recorder.Eventf(nad, nil, corev1.EventTypeWarning, ReasonWhereaboutsLeaseRequired, "CheckMixed",
				"NodeSlicePool %s/%s is shared with whereabouts (NetworkAttachmentDefinition %s): set \"whereabouts_lease\": true in this NAD's ipam section (ipam.whereabouts_lease); until then rackwire refuses its ADDs",
				r.Namespace, slice, strings.Join(refs, ", "))
		}
		if done[slice] {
			continue
		}
		done[slice] = true
		errs = append(errs, r.markShared(ctx, slice, strings.Join(refs, ",")))
	}
	return errors.Join(errs...)
}

// markShared sets (or clears, with "") the NodeSlicePool's list of whereabouts NADs.
func (r *Reconciler) markShared(ctx context.Context, slice, refs string) error {
	nsp := &nodeslicev1alpha1.NodeSlicePool{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: slice}, nsp); err != nil {
		return client.IgnoreNotFound(err)
	}
	if nsp.Annotations[AnnotationSharedWithWhereabouts] == refs {
		return nil
	}
	value := "null"
	if refs != "" {
		value = fmt.Sprintf("%q", refs)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%s}}}`, AnnotationSharedWithWhereabouts, value)
	err := r.Patch(ctx, nsp, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// warn says whether a NAD is to be warned of what: once per NAD version and list.
func (r *Reconciler) warn(uid types.UID, what string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.warned == nil {
		r.warned = map[types.UID]string{}
	}
	if r.warned[uid] == what {
		return false
	}
	r.warned[uid] = what
	return true
}
