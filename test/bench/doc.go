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

// Package bench measures IPAM throughput of the built manager binary against a local
// kube-apiserver and etcd, as a ratio to the apiserver's own write limit measured in the same
// run. It only has a benchmark (BenchmarkIPAMThroughput), so `make test` does not run it;
// `make bench` does.
//
// Environment: BENCH_N (comma-separated claim counts, default "1000,5000"), BENCH_LARGE=1
// (adds 20000), BENCH_PREFILL (addresses already in the pool for the filling run, default
// 20000), BENCH_MANAGER_FLAGS (extra manager flags, space separated), BENCH_KEEP=1 (keep the
// work directory with the manager log).
package bench
