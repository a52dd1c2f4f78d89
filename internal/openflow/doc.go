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

// Package openflow renders a port's access rules as OpenFlow flows for Open vSwitch, the
// one switch whose ACLs rackwire programs itself instead of through a vendor's ACL syntax.
//
// The rules filter traffic entering the switch from the port. They are tried in order and
// the first match decides: allow hands the packet to the bridge's normal forwarding, deny
// drops it. Traffic that matches no rule is forwarded as if the port had no rules, the
// behaviour of an ACL list that ends in "permit any", so a list of denies stays a blocklist.
//
// It has no Kubernetes imports: the driver turns the API's ACL type into Rules.
package openflow
