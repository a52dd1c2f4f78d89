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

// Package switchport is the SwitchPort state machine (DESIGN.md section 5).
//
// handlers maps each state (None, Idle, Configuring, Active, Cleaning, Deleting) to one
// handler that returns an outcome: the next state, the reason and message, and what the
// switch now holds. Deletion is checked before dispatch (a port that may hold configuration
// goes to Cleaning first); record writes state, conditions (Ready, Configured) and the
// applied configuration; Reconcile patches the status once at the end.
//
// Changes to ports of one switch go through a Batcher: requests collected for a short window
// become one Driver.Apply, one switch is never driven by two calls at once, and different
// switches run in parallel. The Switch reconciler's provider checks share the same Batcher.
//
// Until the Ansible driver is wired in, the manager's driver factory is
// switchdriver.Unavailable: linked ports stay in Configuring with reason DriverUnavailable,
// and no port is ever reported Active for a configuration no switch received. Ports being
// cleaned (unlinked or deleted) wait in Cleaning for the same reason, and so does the deletion
// of a Switch whose ports were linked.
package switchport
