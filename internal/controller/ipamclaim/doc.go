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

// Package ipamclaim gives KubeVirt VMs persistent secondary-network addresses without
// OVN-Kubernetes, in two reconcilers:
//
//   - the IPAMClaim allocator: for every claim of a network whose NAD uses rackwire's IPAM
//     and allows persistent IPs, one address per range, each held by an
//     OverlappingRangeIPReservation (the object whose create is the lock the CNI plugin and
//     whereabouts take too), then status.ips; released when the claim goes, never when a pod
//     does;
//   - the VM claim controller (what kubevirt/ipam-extensions does): a claim per persistent
//     network of every VM, as soon as the VM exists, owned by the VM and held by a finalizer
//     until the VM is being deleted and its VMI is gone.
//
// The launcher-pod webhook that writes the claim references into the pod lives in
// webhooks/kubevirt/v1.
package ipamclaim
