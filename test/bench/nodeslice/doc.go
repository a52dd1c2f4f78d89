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

// Package nodeslice measures how fast Nodes joining a cluster get their slices of every
// node-slice network: rackwire's manager binary against whereabouts' own node-slice
// controller (cmd/nodeslicecontroller of whereabouts v0.9.4, built by hack/cni-bins.sh), on
// the same workload in the same run, each on a fresh local control plane.
//
// Workload: 10 NADs over 5 networks (two NADs per network, in two namespaces, each network
// a /16 cut into 8,192 /29 slices), created first; then BENCH_NODES Nodes (comma-separated,
// default "1000,5000") created by 16 parallel clients. A watch on the NodeSlicePools
// records when each Node first appears in each pool.
//
// Printed per run: time from the first Node's creation until every Node holds a slice of
// every network, the p50/p99 of a Node's creation-to-last-slice time, NodeSlicePool writes
// per Node, and the controller's CPU time per Node (and the apiserver's and etcd's); then,
// per controller, the per-node cost at the largest count over that at the smallest (goal
// for rackwire: within 1.2x).
//
// Also printed: the pool writes and their bytes (as JSON), and how long creating the Nodes
// took beside each controller.
//
// The whereabouts runs have no admission webhook for NodeSlicePools (whereabouts ships
// none); rackwire's runs install its webhook as it ships, and its manager writes as the
// ServiceAccount config/default deploys it under, whose writes the webhook lets through
// unreviewed (webhooks/nodeslice/v1alpha1.ManagerUser).
// BENCH_TIMEOUT (default 10m) bounds one run; a run that does not finish says how many
// (node, network) slices were still missing. BENCH_DIR keeps the runs' logs there;
// BENCH_CONTROLLERS ("rackwire", "whereabouts") runs only those.
package nodeslice
