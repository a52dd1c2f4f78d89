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

package ansible

import (
	"slices"
	"testing"

	"github.com/rackwire/rackwire/internal/fakeswitch"
)

// bystander is a Cumulus port that neither rendering configures, on which someone left NCLU
// edits pending before the runs: NCLU keeps one pending change per switch, whoever made it.
const bystander = "swp4"

// foreignEdits are what that someone left pending.
var foreignEdits = []string{"net add bridge bridge ports " + bystander, "net add interface " + bystander + " bridge access 77"}

// nrFixture is the fake switch of one side of TestNRCompare. Cumulus' runs Ansible's commands
// with a shell (network-runner's nclu module is Python run on the switch), and has a bystander
// port with edits pending.
func nrFixture(t *testing.T, os string) *cliFixture {
	t.Helper()
	if os != "cumulus" {
		return newCLIFixture(t, os, enableOf(os), "")
	}
	f := newCLIFixtureOf(t, fakeswitch.Options{
		OS: os, User: "admin", Password: "s3cret{{ x }}", Ports: append(slices.Clone(cliPorts[os]), bystander), Shell: true,
	})
	for _, e := range foreignEdits {
		f.fake.Pend(e)
	}
	return f
}

// compareBystander compares what the bystander port carries after each side's run.
func compareBystander(t *testing.T, os string, ref, own *fakeswitch.Switch, listed []difference) {
	t.Helper()
	if os != "cumulus" {
		return
	}
	comparePort(t, listed, os, "bystander", bystander, ref.PortState(bystander), own.PortState(bystander), "untagged", "tagged", "bridged")
}
