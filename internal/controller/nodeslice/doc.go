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

// Package nodeslice is the NodeSlicePool reconciler: NetworkAttachmentDefinitions and Nodes
// in, one whereabouts-compatible NodeSlicePool per network out, each Node holding a slice of
// every network's range.
//
// The work queue holds networks. A Node joining or leaving is noted in every network's
// in-memory state and wakes each network once, so a join costs work in proportion to the
// networks (whereabouts requeues every NAD and rescans every node on every node event); a
// network's reconcile applies only the nodes noted since its last write, and rebuilds from
// the Node cache only when its pool was written by someone else, its configuration changed
// or a write conflicted. Writes carry the resourceVersion they were computed from.
package nodeslice
