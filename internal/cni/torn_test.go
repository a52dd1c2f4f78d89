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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/rackwire/rackwire/internal/cni"
)

// TestTornRecordsWedgeNoVerb: after a power cut, a file system that keeps no order between a
// file's data and its directory's names (ext4 without a journal) can leave a record's name on
// an empty file, or on another attachment's record written since. DEL of that attachment
// still frees its pool entry and reservation (its way without a record), and GC and the
// other attachments' verbs go on.
func TestTornRecordsWedgeNoVerb(t *testing.T) {
	t.Setenv("NODENAME", "node-torn")
	conf := netConf("1.1.0", "tornnet", `"range":"10.68.0.0/24"`)
	empty := attachment{conf: conf, container: "c-empty", pod: "empty"}
	other := attachment{conf: conf, container: "c-other", pod: "other"}
	keep := attachment{conf: conf, container: "c-keep", pod: "keep"}
	for _, a := range []attachment{empty, other, keep} {
		a.mustAdd(t)
	}
	pool := "tornnet-10.68.0.0-24"
	eventually(t, func() error {
		if n := len(ippool(t, pool).Spec.Allocations); n != 3 {
			return fmt.Errorf("the pool holds %d entries, want 3", n)
		}
		return nil
	})
	dir := netDir(t, "node-torn", "tornnet")
	flusherGone(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "c-empty_net1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	keepRec, err := os.ReadFile(filepath.Join(dir, "c-keep_net1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c-other_net1"), keepRec, 0o600); err != nil {
		t.Fatal(err)
	}

	gc := map[string]any{}
	_ = json.Unmarshal(conf, &gc)
	gc["cni.dev/valid-attachments"] = []types.GCAttachment{{ContainerID: "c-keep", IfName: "net1"}, {ContainerID: "c-empty", IfName: "net1"}, {ContainerID: "c-other", IfName: "net1"}}
	b, _ := json.Marshal(gc)
	if err := cni.GC(&skel.CmdArgs{StdinData: b}); err != nil {
		t.Fatalf("GC with torn records: %v", err)
	}
	for _, a := range []attachment{empty, other} {
		if err := a.del(); err != nil {
			t.Fatalf("DEL %s with a torn record: %v", a.container, err)
		}
	}
	eventually(t, func() error {
		got := ippool(t, pool).Spec.Allocations
		if len(got) != 1 || got["3"].ContainerID != "c-keep" {
			return fmt.Errorf("after the DELs the pool holds %v, want c-keep's entry only", got)
		}
		for _, addr := range []string{"10.68.0.1", "10.68.0.2"} {
			if _, ok := reservation(t, "tornnet-"+addr); ok {
				return fmt.Errorf("reservation of %s left", addr)
			}
		}
		return nil
	})
	if _, ok := reservation(t, "tornnet-10.68.0.3"); !ok {
		t.Errorf("c-keep's reservation went with the torn records")
	}
	if err := keep.del(); err != nil {
		t.Fatal(err)
	}
}
