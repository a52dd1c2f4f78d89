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

// Package ipamclaim measures persistent IPs under a burst: BENCH_VMS KubeVirt VMs (default
// 1,000) created at once by 16 parallel clients on one persistent network (a /16), with
// the IPAMClaim allocator and the VM claim controller in a manager on a fresh local control
// plane (production settings: 64 workers per controller, 500 QPS / 1000 burst). A watch on
// the claims records when each is created and when it gets status.ips.
//
// Printed: claims allocated per second (from the first VM's creation to the last claim's
// addresses), p50/p99 from a VM's creation to its claim's status.ips, the manager's writes
// per VM (counted in its client: claim create, reservation create, status patch; Events
// are not counted), and the apiserver's write floor measured in the same run beforehand: a
// plain client (16 workers, QPS 1000) making the same three writes per claim (a claim with
// metadata of the same size under the benchmark's own keys, a reservation, a status patch) for as many claims of a network rackwire
// does not serve, with the manager and its webhooks in place. The ratio is rackwire's rate
// over the floor's.
//
// The latency floor is taken in the same run before the burst: the users' creates of as many
// VMs (on no secondary network), and a plain client with the manager's client settings that
// reacts to each VM's creation from a watch, on 64 workers, with the same three writes; its
// p50 and p99 from a VM's creation to its claim's status.ips (seen by a watch, as in the
// burst) are what no controller on the machine can beat while the users' creates run.
//
// To say where the time went, it also prints the apiserver's own count of the burst's
// requests per VM by verb, resource and code (watches left out: a read here went past a
// cache, a 409 is a conflict), the manager's mean queue wait and reconcile time per
// controller, the latency split at the claim's creation, how long the users' VM creates
// took, and the machine's load average (the apiserver's rate swings with it).
//
// The manager runs in the benchmark's process (so that its writes can be counted), beside
// the harness: CPU is shared the way the machine shares it. BENCH_TIMEOUT (default 10m)
// bounds the burst. It only has a benchmark, so `make test` does not run it.
package ipamclaim
