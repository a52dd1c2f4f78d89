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

// Package playbooks embeds the Ansible playbooks of the switch driver, so the manager
// binary carries the exact playbooks it was tested with. providers/<os>/ holds rackwire's
// overrides of the network-runner role; the role finds them next to the playbook.
package playbooks

import "embed"

// FS holds the playbooks, tasks/, push/ (how each OS takes a configuration push) and providers/.
//
//go:embed *.yaml tasks providers push
var FS embed.FS
