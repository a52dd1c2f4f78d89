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

// Package netcli renders the configuration of a switch's ports as the command lines of its
// network OS, so that a run pushes one configuration per switch (one commit on junos)
// whatever the number of ports. It knows each OS of the AnsibleSwitch enum but Open vSwitch,
// which internal/switchdriver/ansible renders as one shell script of its own.
package netcli
