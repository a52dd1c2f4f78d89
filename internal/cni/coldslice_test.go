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
	"encoding/json"
	"fmt"
	"net/netip"
	"sync"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/controlplane"
)

// TestColdNodeBurstReadsTheSliceOnce: a burst of ADDs on a node with no slice cached yet (its
// first pods) reads the NodeSlicePool once, not once per ADD: the ADDs behind the first find
// the slice it cached. Each read was a request, and on a loaded node a TLS handshake, of
// every one of the burst's processes.
func TestColdNodeBurstReadsTheSliceOnce(t *testing.T) {
	ctx := context.Background()
	slice := netip.MustParsePrefix("10.78.0.0/27")
	slicePool(t, "coldslice", "10.78.0.0/24", "/27", wbv1.NodeSliceAllocation{NodeName: "node-cold", SliceRange: slice.String()})
	conf := netConf("1.1.0", "coldslice", `"range":"10.78.0.0/24","node_slice_size":"/27"`)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := kube.Discovery().RESTClient()
	before, err := controlplane.ReadRequests(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	const burst = 8
	var wg sync.WaitGroup
	outs, errs := make([][]byte, burst), make([]error, burst)
	for i := range burst {
		wg.Go(func() {
			id := fmt.Sprintf("c-cold-%d", i)
			outs[i], errs[i] = runPlugin("ADD", conf, id, "node-cold", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id)
		})
	}
	wg.Wait()
	addrs := make([]netip.Addr, burst)
	for i, out := range outs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		r := &current.Result{}
		if err := json.Unmarshal(out, r); err != nil || len(r.IPs) != 1 {
			t.Fatalf("ADD result %s: %v", out, err)
		}
		addrs[i], _ = netip.AddrFromSlice(r.IPs[0].Address.IP)
		addrs[i] = addrs[i].Unmap()
	}
	after, err := controlplane.ReadRequests(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[netip.Addr]bool{}
	for _, a := range addrs {
		if !slice.Contains(a) || seen[a] {
			t.Fatalf("addresses %v: want distinct ones in %s", addrs, slice)
		}
		seen[a] = true
	}
	if got := after.Since(before)["GET nodeslicepools"]; got != 1 {
		t.Errorf("%d ADDs on a node without its slice cached read the NodeSlicePool %v times, want once", burst, got)
	}
}
