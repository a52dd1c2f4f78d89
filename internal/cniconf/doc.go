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

// Package cniconf reads what a NAD's CNI configuration says about a network that uses
// rackwire's IPAM plugin (ipam.type "rackwire"): its CNI name, whether it allows persistent
// IPs, and its address ranges in whereabouts' keys; and names the objects that hold a
// network's addresses as whereabouts v0.9.4 names them. The manager (IPAMClaim allocation,
// the VM claim controller, the launcher-pod webhook) and the CNI plugin share it. It is
// tolerant: unknown keys are ignored, since NADs are not rackwire's to refuse. It imports
// only the standard library.
package cniconf
