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

// Package chaos runs the built manager as two replicas with leader election against one
// local control plane, sends a burst of Metal3 and Cluster API claims, and meanwhile kills
// the leader (SIGKILL) and the kube-apiserver (SIGKILL, then started again with the same
// arguments). It then checks what DESIGN.md 4 promises: every claim bound to one IPAddress
// of its own, no address held twice, no published address ever changed, and nothing left
// once the claims are gone. make test runs it (a few minutes); CHAOS_CLAIMS,
// CHAOS_LEADER_KILLS and CHAOS_APISERVER_KILLS change its size.
package chaos
