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
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// killedAfterReserve runs an ADD whose configuration sleeps between the reservation create
// and the end of the ADD (sleep_for_race), and kills the plugin process once its reservation
// exists: the record is left with its entry Reserving, as a node reboot or an OOM kill
// leaves it. It returns the reserved address.
func killedAfterReserve(t *testing.T, conf []byte, network string, slice netip.Prefix, node, id string) netip.Addr {
	t.Helper()
	cmd := startAdd(t, conf, node, id)
	name := reservedBy(t, id)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for a := slice.Addr(); slice.Contains(a); a = a.Next() {
		if cni.ReservationName(network, a) == name {
			return a
		}
	}
	t.Fatalf("reservation %s of %s names no address of %s", name, id, slice)
	return netip.Addr{}
}

// startAdd starts an ADD of pod id on node in a plugin process of its own.
func startAdd(t *testing.T, conf []byte, node, id string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(plugin)
	cmd.Env = append(os.Environ(), "CNI_COMMAND=ADD", "CNI_CONTAINERID="+id, "CNI_NETNS=/var/run/netns/"+id,
		"CNI_IFNAME=net1", "CNI_PATH=/nonexistent", "CNI_ARGS=K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id, "NODENAME="+node)
	cmd.Stdin = bytes.NewReader(conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// reservedBy waits until container id holds a reservation and returns its name.
func reservedBy(t *testing.T, id string) string {
	t.Helper()
	var name string
	eventually(t, func() error {
		l := &wbv1.OverlappingRangeIPReservationList{}
		if err := k8s.List(context.Background(), l, client.InNamespace(poolNS)); err != nil {
			return err
		}
		for _, o := range l.Items {
			if o.Spec.ContainerID == id {
				name = o.Name
				return nil
			}
		}
		return fmt.Errorf("no reservation of %s yet", id)
	})
	return name
}

// sleepConf is conf with whereabouts' sleep_for_race, long enough to kill the plugin in it.
func sleepConf(name, ipam string) []byte {
	return netConf("1.1.0", name, ipam+`,"sleep_for_race":60`)
}

// TestKilledAddLetsTheFlusherGoIdle: an ADD killed after its reservation was created, before
// it answered, leaves its entry Reserving. The flusher never writes such an entry, so it is
// no work of the flusher's: the flusher still writes the node's other entries and goes idle,
// instead of polling the apiserver every second until a DEL comes (after a reboot, none may).
func TestKilledAddLetsTheFlusherGoIdle(t *testing.T) {
	const name = "killednet"
	ipam := `"range":"10.87.0.0/24","node_slice_size":"/28"`
	slicePool(t, name, "10.87.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-z", SliceRange: "10.87.0.16/28"})
	slice, pool := netip.MustParsePrefix("10.87.0.16/28"), name+"-node-z-10.87.0.16-28"
	conf := netConf("1.1.0", name, ipam)
	killed := killedAfterReserve(t, sleepConf(name, ipam), name, slice, "node-z", "c-killed")
	// The runtime's DEL of the killed ADD, whenever it comes, ends whatever this test left.
	t.Cleanup(func() {
		_, _ = runPlugin("DEL", conf, "c-killed", "node-z", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-killed")
	})
	next := addProcess(t, conf, "node-z", "c-after-kill")
	if next == killed {
		t.Fatalf("the next ADD got %s, reserved by the killed ADD", killed)
	}
	poolEntry(t, pool, slice, next, "c-after-kill")
	flusherGone(t, netDir(t, "node-z", name))
	// The runtime's DEL of the killed ADD frees its reservation and its place on the node.
	if _, err := runPlugin("DEL", conf, "c-killed", "node-z", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-killed"); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		if _, ok := reservation(t, cni.ReservationName(name, killed)); ok {
			return fmt.Errorf("reservation of %s still there after the killed ADD's DEL", killed)
		}
		return nil
	})
	flusherGone(t, netDir(t, "node-z", name))
	if got := addProcess(t, conf, "node-z", "c-after-del"); got != killed {
		t.Errorf("after the killed ADD's DEL, the next ADD got %s, not the freed %s", got, killed)
	}
}

// TestKilledAddRetried: the runtime's retry of a killed ADD (same container) gets the address
// the killed one reserved, and the flusher writes it to the pool; its DEL then frees both.
func TestKilledAddRetried(t *testing.T) {
	const name = "retrynet"
	ipam := `"range":"10.87.1.0/24","node_slice_size":"/28"`
	slicePool(t, name, "10.87.1.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-z", SliceRange: "10.87.1.16/28"})
	slice, pool := netip.MustParsePrefix("10.87.1.16/28"), name+"-node-z-10.87.1.16-28"
	conf := netConf("1.1.0", name, ipam)
	killed := killedAfterReserve(t, sleepConf(name, ipam), name, slice, "node-z", "c-retried")
	if got := addProcess(t, conf, "node-z", "c-retried"); got != killed {
		t.Fatalf("the retried ADD got %s, not %s its killed try reserved", got, killed)
	}
	poolEntry(t, pool, slice, killed, "c-retried")
	if _, err := runPlugin("DEL", conf, "c-retried", "node-z", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-retried"); err != nil {
		t.Fatal(err)
	}
	poolEntry(t, pool, slice, killed, "")
	eventually(t, func() error {
		if _, ok := reservation(t, cni.ReservationName(name, killed)); ok {
			return fmt.Errorf("reservation of %s still there after the DEL", killed)
		}
		return nil
	})
	flusherGone(t, netDir(t, "node-z", name))
}

// TestAddDelAddOfOneContainer: a runtime's retry (ADD, DEL, ADD of the same container) while
// the DEL is still written behind: the second ADD waits for it, and what the released entry's
// flush deletes is never the second ADD's reservation or pool entry.
func TestAddDelAddOfOneContainer(t *testing.T) {
	const name = "retrydelnet"
	slicePool(t, name, "10.87.2.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-z", SliceRange: "10.87.2.16/28"})
	slice, pool := netip.MustParsePrefix("10.87.2.16/28"), name+"-node-z-10.87.2.16-28"
	conf := netConf("1.1.0", name, `"range":"10.87.2.0/24","node_slice_size":"/28"`)
	for i := range 3 {
		first := addProcess(t, conf, "node-z", "c-add-del-add")
		if _, err := runPlugin("DEL", conf, "c-add-del-add", "node-z", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-add-del-add"); err != nil {
			t.Fatal(err)
		}
		again := addProcess(t, conf, "node-z", "c-add-del-add")
		flusherGone(t, netDir(t, "node-z", name))
		poolEntry(t, pool, slice, again, "c-add-del-add")
		o, ok := reservation(t, cni.ReservationName(name, again))
		if !ok || o.Spec.ContainerID != "c-add-del-add" {
			t.Fatalf("round %d: the second ADD's reservation of %s (first ADD had %s) is gone: %v %v", i, again, first, ok, o)
		}
		if first != again {
			poolEntry(t, pool, slice, first, "")
		}
		if _, err := runPlugin("DEL", conf, "c-add-del-add", "node-z", "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=c-add-del-add"); err != nil {
			t.Fatal(err)
		}
		poolEntry(t, pool, slice, again, "")
	}
}
