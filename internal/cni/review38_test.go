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
	"strings"
	"testing"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestReview38AnUnmovableRecordDoesNotRescanAtEveryLock: a record the earlier version named
// <container>_<interface> near the file-name limit (255 bytes) has a hashed name 17 bytes
// longer, and a twin 4 more: its save fails (ENAMETOOLONG) at each try, renameOldRecords
// returns before it makes .named, and every verb of the network on the node (each ADD, DEL,
// CHECK and flusher pass) reads the whole directory and every record in it, under the
// node's lock, for good.
func TestReview38AnUnmovableRecordDoesNotRescanAtEveryLock(t *testing.T) {
	const name, node = "r38long", "node-r38g"
	slicePool(t, name, "10.138.6.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.138.6.16/28"})
	conf := netConf("1.1.0", name, `"range":"10.138.6.0/24","node_slice_size":"/28"`)
	addProcess(t, conf, node, "c-r38g-o")
	dir := netDir(t, node, name)
	flusherGone(t, dir)

	// The earlier version's record of a container whose ID is 240 bytes, interface "n..1".
	cid := "c" + strings.Repeat("0", 239)
	old := cid + "_n__1"
	if err := os.WriteFile(filepath.Join(dir, old), []byte(`{"containerID":"`+cid+`","ifName":"n..1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ".named")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if _, err := runPlugin("DEL", conf, "c-r38g-o", node, podArgs("c-r38g-o")); err != nil {
		t.Fatal(err)
	}
	flusherGone(t, dir)
	if _, err := os.Lstat(filepath.Join(dir, ".named")); err != nil {
		t.Errorf("after a verb, the directory is still not marked moved (%v): each Lock reads every record", err)
	}
}
