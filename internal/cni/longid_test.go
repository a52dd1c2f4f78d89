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
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// TestALongContainerID: the runtime chooses container IDs, of any length. Attachments whose
// container ID and interface joined are longer than a file name may be (255 bytes) get
// their addresses, two of them alike in their first 250 bytes get two, and each DEL gives
// its address back.
func TestALongContainerID(t *testing.T) {
	t.Setenv("NODENAME", "node-a")
	conf := netConf("1.0.0", "longid", `"range":"10.143.0.0/28"`)
	long := strings.Repeat("c", 250)
	var as []attachment
	got := map[string]string{}
	for i, id := range []string{long, long + "d", long + "_e", strings.Repeat("f", 4000)} {
		a := attachment{conf: conf, container: id, pod: "long-" + string(rune('a'+i))}
		addr := addrs(a.mustAdd(t))[0]
		if other, ok := got[addr]; ok {
			t.Fatalf("container IDs %.20s...(%d bytes) and %.20s...(%d bytes) were both given %s", id, len(id), other, len(other), addr)
		}
		got[addr] = id
		as = append(as, a)
	}
	held := func() map[string]bool {
		pools := &wbv1.IPPoolList{}
		if err := k8s.List(context.Background(), pools, client.InNamespace(poolNS)); err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, p := range pools.Items {
			if !strings.HasPrefix(p.Name, "longid") {
				continue
			}
			for _, a := range p.Spec.Allocations {
				ids[a.ContainerID] = true
			}
		}
		return ids
	}
	if h := held(); len(h) != len(as) {
		t.Fatalf("the pool holds %d of the %d attachments", len(h), len(as))
	}
	for _, a := range as {
		if err := a.del(); err != nil {
			t.Fatalf("DEL of a %d-byte container ID: %v", len(a.container), err)
		}
	}
	if h := held(); len(h) != 0 {
		t.Fatalf("after the DELs the pool still holds %d attachments", len(h))
	}
}
