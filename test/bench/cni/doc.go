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

// Package cni benchmarks rackwire's CNI IPAM plugin against the whereabouts v0.9.4 binary in
// one run, both in node-slice mode, each against a local kube-apiserver started for it alike
// (the second plugin would otherwise run on an apiserver still holding the first's
// 1,000-entry pool and its history), both invoked as a runtime invokes them (a process per
// verb, the configuration on stdin):
//
//   - one node, sequential ADDs filling the node's slice to 1,000 pods, timed until the pool
//     holds every entry (rackwire writes it behind its ADDs: ADDs per second count that too),
//     with the apiserver's requests per ADD (the flusher's included); at 10, 100 and 1,000
//     pods, probes of ADD give p50 and p99. Probes come as pods do, apart at random
//     (exponential gaps of mean 250 ms, one seed for both plugins): a fixed beat let a
//     plugin fit its pool writes between pods. A probe's pod stays attached for 1.5 s, past
//     the longest flush window (1 s), so its pool entry is written and then removed by its
//     DEL, whose p50 and p99 are reported too;
//   - ten nodes, 16 ADDs at once on each, counted until the pools hold all 160 entries and
//     their reservations exist: throughput and p99; then the same for DEL, counted until
//     the pools hold none and the reservations are gone (rackwire's flusher deletes them
//     after its pool write, whereabouts' DEL before it returns);
//   - rackwire's sequential part once more, at 10 and 1,000 pods, on the apiserver whereabouts
//     ran on, which still holds whereabouts' 1,000-entry pool and the history of its writes:
//     an apiserver that holds more than the network under test, as a cluster's does.
//
// Goals (issue 24): p99 ADD at 1,000 pods within 1.2x of p99 at 10 (reported for both
// apiservers); ADDs per second, counted
// until the pool holds them all, at least 5x whereabouts'; the same for DEL. Run with
// `make bench`; BENCH_CNI_FILL changes the fill (default 1000) and BENCH_CNI_PROBES the probes
// per level (default 200: p99 is the nearest-rank quantile, the third-slowest of 200 ADDs,
// so three stalls of the machine decide it).
package cni
