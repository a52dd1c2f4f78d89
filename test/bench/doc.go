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

// Package bench measures IPAM throughput of the built manager binary (started with the
// flag defaults it ships) against a local kube-apiserver and etcd, as a ratio to the
// apiserver's own write limit measured in the same run. It only has a benchmark
// (BenchmarkIPAMThroughput), so `make test` does not run it; `make bench` does.
//
// The limit is a plain client (QPS 1000, burst 2000, 16 workers) making the three writes a
// contract-following allocator needs per claim (finalizer, IPAddress, status) over
// pre-created claims of a pool kind rackwire does not serve: the manager reconciles none
// of them, but its webhooks stay in the apiserver's write path as they are for the
// rackwire runs. The pre-filled pool of the filling run gets its addresses as IPAddress
// objects created directly by the same kind of client, as earlier claims would have left
// them.
//
// The floor that counts the user's create is measured the same way: the user's claim
// creates (with the finalizer on, as the claim-finalizer admission policy puts it) by createWorkers
// workers, and beside them, as each lands, the IPAddress create and status patch an
// allocator answers it with, by limitWorkers workers: three writes per claim, the user's
// among them, at full speed on the same apiserver.
//
// Last, rackwire's control plane stops and Metal3's ip-address-manager (built by
// hack/ipam-manager-bin.sh; its client QPS and burst raised to 1000/2000, 16 concurrent pool
// reconciles) runs the Metal3 IPv4 workload on a control plane of its own, with the CRDs its
// module ships and no webhooks: both serve the same ipam.metal3.io kinds, so they cannot
// share an apiserver. BENCH_PEER=0 leaves it out.
//
// Besides the rates, the table gives the CPU time of kube-apiserver, etcd, the manager and
// the harness per claim, the limit's CPU time per claim over the run's, and the share of
// the machine other processes took: on a shared two-core machine both the limit and the
// runs are CPU-bound, so CPU per claim says where the time went when a rate moves, and
// stays put when another process takes cores for part of a run.
//
// Environment: BENCH_N (comma-separated claim counts, default "1000,5000"), BENCH_LARGE=1
// (adds 20000), BENCH_PREFILL (addresses already in the pool for the filling run, default
// 20000; the filling pair runs at the largest claim count), BENCH_MANAGER_FLAGS (extra manager flags, space separated), BENCH_KEEP=1 (keep the
// work directory with the manager log), BENCH_PROFILE_DIR (write 15 s CPU profiles of the
// manager and of kube-apiserver taken at the start of each run there), BENCH_VERBOSE=1
// (print the apiserver's requests per claim for each run), BENCH_WORKLOADS
// (comma-separated substrings of workload names to run, "fill" for the filling pair; the
// default runs all).
package bench
