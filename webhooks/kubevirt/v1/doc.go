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

// Package v1 holds rackwire's admission webhook for KubeVirt's kubevirt.io/v1 workloads: the
// launcher-pod mutator, which writes into a virt-launcher pod's network-selection elements
// the IPAMClaim each persistent network's address lives in. The pod is a core/v1 Pod, but
// it is KubeVirt's (its VMI decides what it carries), so the webhook lives with KubeVirt's
// group, as DESIGN.md's webhooks/<group>/<version>/ layout has it.
package v1
