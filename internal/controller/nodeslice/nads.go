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
	"fmt"
	"slices"
	"strings"

	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rackwire/rackwire/internal/slicing"
)

// nadView is one NAD of a network and what its configuration says.
type nadView struct {
	nad *nadv1.NetworkAttachmentDefinition
	net slicing.Network
	err error
}

func (v nadView) key() string { return v.nad.Namespace + "/" + v.nad.Name }

// choice is what a network's NADs decide: the configuration the pool follows (that of the
// oldest NAD that reads well), and the NADs with a problem, each with its message.
type choice struct {
	ref      *nadView
	views    []nadView
	problems map[string]string // NAD key -> problem
	reasons  map[string]string // NAD key -> Event reason
}

// Event reasons on NADs.
const (
	reasonInvalidConfig  = "InvalidNodeSliceConfig"
	reasonConfigConflict = "NodeSliceConfigConflict"
)

func (r *Reconciler) readNADs(ctx context.Context, network string) (choice, error) {
	var list nadv1.NetworkAttachmentDefinitionList
	if err := r.List(ctx, &list, client.MatchingFields{networkIndex: network}); err != nil {
		return choice{}, err
	}
	c := choice{problems: map[string]string{}, reasons: map[string]string{}}
	for i := range list.Items {
		nad := &list.Items[i]
		n, err := slicing.ParseNetwork([]byte(nad.Spec.Config))
		if n.Name != network {
			continue // the index ran ahead of or behind the cache
		}
		c.views = append(c.views, nadView{nad: nad, net: n, err: err})
	}
	// Oldest first: the first NAD of a network sets its slicing, a later one that
	// disagrees is the one reported.
	slices.SortFunc(c.views, func(a, b nadView) int {
		if d := a.nad.CreationTimestamp.Compare(b.nad.CreationTimestamp.Time); d != 0 {
			return d
		}
		return strings.Compare(a.key(), b.key())
	})
	for i := range c.views {
		v := &c.views[i]
		switch {
		case v.err != nil:
			c.problems[v.key()], c.reasons[v.key()] = fmt.Sprintf("spec.config: %v", v.err), reasonInvalidConfig
		case c.ref == nil:
			c.ref = v
		case !c.ref.net.SameSlicing(v.net):
			c.problems[v.key()] = fmt.Sprintf("network %s: range %s, slice size %s (bounds %s..%s, %d exclusions) differ from NAD %s's "+
				"range %s, slice size %s (bounds %s..%s, %d exclusions), which the pool follows",
				v.net.Name, v.net.Range, v.net.SliceSize, v.net.Start, v.net.End, len(v.net.Exclude),
				c.ref.key(), c.ref.net.Range, c.ref.net.SliceSize, c.ref.net.Start, c.ref.net.End, len(c.ref.net.Exclude))
			c.reasons[v.key()] = reasonConfigConflict
		}
	}
	return c, nil
}

// conflictMessage names the NADs with a problem, for the pool's condition.
func (c choice) conflictMessage() string {
	keys := make([]string, 0, len(c.problems))
	for k := range c.problems {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("NAD %s: %s", k, c.problems[k]))
	}
	return strings.Join(parts, "; ")
}
