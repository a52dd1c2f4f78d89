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
	"bytes"
	"encoding/json"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestFullSliceWhileAnAddReserves: a slice of two addresses, one reserved by an ADD still in
// its window without the node's lock (where sleep_for_race is slept), the other taken by a
// second pod. A third pod's ADD finds the slice full and says so, and leaves the first ADD's
// address alone: the first ADD answers it, and no address is handed out twice.
func TestFullSliceWhileAnAddReserves(t *testing.T) {
	const name, node = "fullwin", "node-fw"
	slicePool(t, name, "10.85.8.0/24", "/30", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.85.8.16/30"})
	slice, pool := netip.MustParsePrefix("10.85.8.16/30"), name+"-"+node+"-10.85.8.16-30"
	conf := netConf("1.1.0", name, `"range":"10.85.8.0/24","node_slice_size":"/30"`)
	kc, held, open := holdReservationAnswer(t)
	first := bytes.ReplaceAll(conf, []byte(strconv.Quote(kubeconfig)), []byte(strconv.Quote(kc)))
	type answer struct {
		out []byte
		err error
	}
	added := make(chan answer, 1)
	go func() {
		out, err := runPlugin("ADD", first, "c-fw-a", node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-fw-a")
		added <- answer{out, err}
	}()
	<-held
	b := addProcess(t, conf, node, "c-fw-b")
	if out, err := runPlugin("ADD", conf, "c-fw-c", node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-fw-c"); err == nil {
		t.Errorf("a third ADD in a slice of two addresses answered: %s", out)
	} else if !strings.Contains(err.Error(), cni.ErrExhausted.Error()) {
		t.Errorf("a third ADD in a full slice failed otherwise: %v", err)
	}
	open()
	a := <-added
	if a.err != nil {
		t.Fatalf("the first ADD failed: %v", a.err)
	}
	r := &current.Result{}
	if err := json.Unmarshal(a.out, r); err != nil || len(r.IPs) != 1 {
		t.Fatalf("first ADD's result %s: %v", a.out, err)
	}
	got, _ := netip.AddrFromSlice(r.IPs[0].Address.IP.To4())
	if got == b || !slice.Contains(got) {
		t.Fatalf("the first ADD answered %s, the second %s, slice %s", got, b, slice)
	}
	poolEntry(t, pool, slice, got, "c-fw-a")
	poolEntry(t, pool, slice, b, "c-fw-b")
	for _, id := range []string{"c-fw-a", "c-fw-b", "c-fw-c"} {
		if _, err := runPlugin("DEL", conf, id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
			t.Fatal(err)
		}
	}
	poolEntry(t, pool, slice, got, "")
	poolEntry(t, pool, slice, b, "")
	flusherGone(t, netDir(t, node, name))
}
