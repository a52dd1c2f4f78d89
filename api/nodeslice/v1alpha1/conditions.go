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

package v1alpha1

// Conditions of a NodeSlicePool, computed in one place by the node-slice reconciler.
const (
	// ConditionReady: every Node holds a slice and the network's NADs agree.
	ConditionReady = "Ready"
	// ConditionConfigConflict: the network's NADs disagree on range or slice size, or one
	// cannot be read; the message names them.
	ConditionConfigConflict = "ConfigConflict"
	// ConditionNodesWithoutSlice: Nodes are waiting for a free slice; the message names them.
	ConditionNodesWithoutSlice = "NodesWithoutSlice"
	// ConditionSlicesHeld: slices no node holds but that are not handed out, because an IPPool
	// of another node still holds addresses in them.
	ConditionSlicesHeld = "SlicesHeld"
)
