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

// Package ansible is the production switch driver: it configures a switch by running
// ansible-playbook (through go-ansible) on the playbooks embedded from playbooks/, which
// import the network-runner role and override it per OS in playbooks/providers/<os>/.
//
// One Apply or Read is one playbook run on one switch, whatever the number of ports; the
// caller (the SwitchPort batcher) serialises runs per switch. Every run works in its own
// temporary directory: the inventory with the credentials is written there 0600 and the
// directory is removed afterwards, so a password never appears on a command line, in an
// environment variable, a log, an Event or a status. The run is bounded by its context and
// a cancelled run loses its whole process group (ansible-playbook, its workers, ssh and
// sshpass), not just the process go-ansible started.
package ansible
