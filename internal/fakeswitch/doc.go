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

// Package fakeswitch is an SSH server that answers as a network switch's command line
// would, for the commands that rackwire's playbooks send: the prompts of each OS (which
// Ansible's network_cli waits for), the enable mode and its secret, configuration modes,
// junos' candidate and commit, and the reads of the ports. It records every command, so
// tests drive the real ansible-playbook against it and compare what a switch would have
// received. Cumulus takes its NCLU commands as SSH exec requests, as over a Linux shell; with
// Options.Shell it runs them with a real /bin/sh whose net answers from the model
// (nclu_exec.go), so that Python modules such as nclu run on it.
//
// It also models what each OS does with VLANs (model.go): access and trunk ports, native
// VLANs and PVIDs, VLAN objects (junos), bridge membership (Cumulus), commits and saves, so
// a test reads what a port carries (PortState) instead of the lines it was sent. Lines outside
// that model are recorded and ignored; a line naming a port the switch lacks is refused as
// the OS would refuse it.
package fakeswitch
