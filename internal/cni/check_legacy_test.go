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

package cni_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckAfterUpgradeFromNameKeyedState: CHECK of a pod added before the upgrade, whose
// record is in the layout keyed by the configuration's name, passes while its pool entry and
// reservation are still its own (a failing CHECK may get a healthy pod torn down), and
// fails once they are not.
func TestCheckAfterUpgradeFromNameKeyedState(t *testing.T) {
	t.Setenv("NODENAME", "node-upc")
	conf := confOf("upcheck", "upcheck-a", `"range":"10.74.0.0/24"`)
	a := attachment{conf: conf, container: "c-upc", pod: "upc"}
	res := a.mustAdd(t)
	legacy := filepath.Join(stateDir, "node-upc", "upcheck")
	if err := os.MkdirAll(legacy, 0o700); err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(stateDir, "node-upc", "upcheck*@*", "c-upc_net1"))
	if len(recs) != 1 {
		t.Fatalf("records: %v", recs)
	}
	if err := os.Rename(recs[0], filepath.Join(legacy, "c-upc_net1")); err != nil {
		t.Fatal(err)
	}
	if err := a.check(t, "1.1.0", res); err != nil {
		t.Errorf("CHECK of a pod recorded before the upgrade: %v", err)
	}
	p := ippool(t, "upcheck-a-10.74.0.0-24")
	for k := range p.Spec.Allocations {
		delete(p.Spec.Allocations, k)
	}
	if err := k8s.Update(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if err := a.check(t, "1.1.0", res); err == nil {
		t.Errorf("CHECK of a pod recorded before the upgrade passes with its pool entry gone")
	}
	if err := a.del(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(legacy, "c-upc_net1")); !os.IsNotExist(err) {
		t.Errorf("DEL left the old record: %v", err)
	}
}
