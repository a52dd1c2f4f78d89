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
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// Condition reasons.
const (
	reasonAllSliced      = "AllNodesSliced"
	reasonNoFreeSlice    = "NoFreeSlice"
	reasonAgree          = "NADsAgree"
	reasonDisagree       = "NADsDisagree"
	reasonNoneHeld       = "NoneHeld"
	reasonAddressesHeld  = "AddressesHeld"
	reasonConfigProblems = "ConfigProblems"
)

// namesShown bounds how many node names a condition or Event message lists.
const namesShown = 10

func listNames(names []string) string {
	if len(names) <= namesShown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:namesShown], ", "), len(names)-namesShown)
}

// setConditions computes every condition of the pool, in this one place.
func setConditions(s *nodeslicev1alpha1.NodeSlicePoolStatus, n *network, c choice) {
	set := func(t string, ok bool, reason, msg string) {
		st := metav1.ConditionFalse
		if ok {
			st = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: t, Status: st, Reason: reason, Message: msg})
	}
	if len(c.problems) == 0 {
		set(nodeslicev1alpha1.ConditionConfigConflict, false, reasonAgree, "every NAD of the network agrees")
	} else {
		set(nodeslicev1alpha1.ConditionConfigConflict, true, reasonDisagree, c.conflictMessage())
	}
	waiting := slices.Sorted(maps.Keys(n.waiting))
	if len(waiting) == 0 {
		set(nodeslicev1alpha1.ConditionNodesWithoutSlice, false, reasonAllSliced, "every Node holds a slice")
	} else {
		set(nodeslicev1alpha1.ConditionNodesWithoutSlice, true, reasonNoFreeSlice,
			fmt.Sprintf("%d Nodes have no slice (whereabouts fails on them) and get one as soon as a slice frees: %s", len(waiting), listNames(waiting)))
	}
	if n.assign != nil {
		held, count := n.assign.Held(namesShown)
		if count == 0 {
			set(nodeslicev1alpha1.ConditionSlicesHeld, false, reasonNoneHeld, "no slice is held back")
		} else {
			parts := make([]string, len(held))
			for i, h := range held {
				parts[i] = h.Slice.String()
				if h.Node != "" {
					parts[i] += " (" + h.Node + ")"
				}
			}
			set(nodeslicev1alpha1.ConditionSlicesHeld, true, reasonAddressesHeld,
				fmt.Sprintf("%d free slices are held back until the addresses of their former nodes are released: %s", count, strings.Join(parts, ", ")))
		}
	}
	switch {
	case c.ref == nil:
		set(nodeslicev1alpha1.ConditionReady, false, reasonConfigProblems, "no NAD of the network has a usable node-slice configuration")
	case len(waiting) > 0:
		set(nodeslicev1alpha1.ConditionReady, false, reasonNoFreeSlice, fmt.Sprintf("%d Nodes have no slice", len(waiting)))
	case len(c.problems) > 0:
		set(nodeslicev1alpha1.ConditionReady, false, reasonDisagree, "some NADs of the network disagree; see ConfigConflict")
	default:
		set(nodeslicev1alpha1.ConditionReady, true, reasonAllSliced, "every Node holds a slice")
	}
}

// reportNADs sends each NAD with a new problem a Warning Event.
func (r *Reconciler) reportNADs(n *network, c choice) {
	for _, v := range c.views {
		msg, bad := c.problems[v.key()]
		if !bad {
			delete(n.reported, v.key())
			continue
		}
		if n.reported[v.key()] == msg {
			continue
		}
		n.reported[v.key()] = msg
		r.Recorder.Eventf(v.nad, nil, corev1.EventTypeWarning, c.reasons[v.key()], "Slice", "%s", msg)
	}
}

// reportWaiting sends the pool a Warning Event naming the Nodes newly without a slice, and
// publishes the count.
func (r *Reconciler) reportWaiting(n *network) {
	nodesWithoutSlice.WithLabelValues(n.cfg.Name).Set(float64(len(n.waiting)))
	var fresh []string
	for node := range n.waiting {
		if _, told := n.told[node]; !told {
			fresh = append(fresh, node)
		}
	}
	n.told = maps.Clone(n.waiting)
	if len(fresh) == 0 || n.pool == nil {
		return
	}
	slices.Sort(fresh)
	r.Recorder.Eventf(n.pool, nil, corev1.EventTypeWarning, reasonNoFreeSlice, "Slice",
		"no free slice of network %s for %d Nodes (whereabouts fails on them until one frees): %s", n.cfg.Name, len(fresh), listNames(fresh))
}
