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
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/utils"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestNonUTF8InterfaceNameIsRefused: the runtime's check of CNI_IFNAME lets bytes that are not
// UTF-8 through (to Linux an interface name is bytes), and JSON keeps each of them as U+FFFD,
// in the pool entry and the reservation as in the record: "net\xe9", "net\xea" and "net\uFFFD"
// of one pod would be one holder there. ADD refuses such a name, naming the variable, and its
// DEL (the runtime's, after the failed ADD) frees nothing of the pod's "net\uFFFD".
func TestNonUTF8InterfaceNameIsRefused(t *testing.T) {
	const name, node = "utf8net", "node-u8"
	slicePool(t, name, "10.131.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.131.0.16/28"})
	slice, pool := netip.MustParsePrefix("10.131.0.16/28"), "utf8net-node-u8-10.131.0.16-28"
	t.Setenv("NODENAME", node)
	conf := netConf("1.1.0", name, `"range":"10.131.0.0/24","node_slice_size":"/28"`)
	held := attachment{conf: conf, container: "c-u8", ifName: "net\uFFFD", pod: "u8"}
	res := held.mustAdd(t)
	addr, _ := netip.AddrFromSlice(res.IPs[0].Address.IP)
	addr = addr.Unmap()
	poolEntry(t, pool, slice, addr, "c-u8")
	for _, ifName := range []string{"net\xe9", "net\xea"} {
		a := attachment{conf: conf, container: "c-u8", ifName: ifName, pod: "u8"}
		if err := utils.ValidateInterfaceName(a.ifName); err != nil {
			t.Fatalf("the runtime's check refuses %q: %v", a.ifName, err)
		}
		if res, _, err := a.add(); err == nil {
			t.Errorf("ADD of interface %q answered %v", ifName, addrs(res))
		} else if !strings.Contains(err.Error(), "CNI_IFNAME") || !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("ADD of interface %q failed otherwise: %v", ifName, err)
		}
		if err := a.del(); err != nil {
			t.Fatalf("DEL of %q: %v", ifName, err)
		}
	}
	flusherGone(t, netDir(t, node, name))
	poolEntry(t, pool, slice, addr, "c-u8")
	if o, ok := reservation(t, cni.ReservationName(name, addr)); !ok || o.Spec.ContainerID != "c-u8" {
		t.Fatalf("the DEL of a refused name freed the reservation of %q's %s", held.ifName, addr)
	}
	if err := held.check(t, "1.1.0", res); err != nil {
		t.Fatalf("CHECK: %v", err)
	}
	if err := held.del(); err != nil {
		t.Fatalf("DEL: %v", err)
	}
	dir := netDir(t, node, name)
	eventually(t, func() error {
		if got := ippool(t, pool).Spec.Allocations; len(got) != 0 {
			return fmt.Errorf("DEL left pool entries %v", got)
		}
		if _, ok := reservation(t, cni.ReservationName(name, addr)); ok {
			return fmt.Errorf("DEL left the reservation of %s", addr)
		}
		des, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, de := range des {
			if !strings.HasPrefix(de.Name(), ".") {
				return fmt.Errorf("DEL left %s in the node's directory", de.Name())
			}
		}
		return nil
	})
}
