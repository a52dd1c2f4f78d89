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
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/testutils"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// netConf is a bridge network delegating to rackwire, as Multus hands it to the plugin.
func netConf(version, name, ipam string, extra ...string) []byte {
	top := ""
	for _, e := range extra {
		top += "," + e
	}
	return fmt.Appendf(nil, `{"cniVersion":%q,"name":%q,"type":"bridge"%s,"ipam":{"type":"rackwire","network_name":%q,`+
		`"kubernetes":{"kubeconfig":%q},"state_dir":%q,%s}}`, version, name, top, name, kubeconfig, stateDir, ipam)
}

type attachment struct {
	conf      []byte
	container string
	ifName    string
	pod       string
	args      string // extra CNI_ARGS
}

func (a attachment) cmdArgs() *skel.CmdArgs {
	args := "IgnoreUnknown=1;K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=" + a.pod
	if a.args != "" {
		args += ";" + a.args
	}
	ifName := a.ifName
	if ifName == "" {
		ifName = "net1"
	}
	return &skel.CmdArgs{ContainerID: a.container, IfName: ifName, Netns: "/var/run/netns/" + a.pod, StdinData: a.conf, Args: args}
}

func (a attachment) add() (*current.Result, string, error) {
	args := a.cmdArgs()
	r, raw, err := testutils.CmdAddWithArgs(args, func() error { return cni.Add(args) })
	if err != nil {
		return nil, "", err
	}
	res, err := current.NewResultFromResult(r)
	if err != nil {
		return nil, "", err
	}
	return res, string(raw), nil
}

func (a attachment) mustAdd(t *testing.T) *current.Result {
	t.Helper()
	res, _, err := a.add()
	if err != nil {
		t.Fatalf("ADD %s: %v", a.container, err)
	}
	return res
}

func (a attachment) del() error {
	args := a.cmdArgs()
	return testutils.CmdDelWithArgs(args, func() error { return cni.Del(args) })
}

// check runs CHECK with prev as prevResult.
func (a attachment) check(t *testing.T, version string, prev *current.Result) error {
	t.Helper()
	conf := map[string]any{}
	if err := json.Unmarshal(a.conf, &conf); err != nil {
		t.Fatal(err)
	}
	pr, err := prev.GetAsVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(pr)
	var raw map[string]any
	_ = json.Unmarshal(b, &raw)
	conf["prevResult"] = raw
	a.conf, _ = json.Marshal(conf)
	args := a.cmdArgs()
	return testutils.CmdCheckWithArgs(args, func() error { return cni.Check(args) })
}

func addrs(r *current.Result) []string {
	var out []string
	for _, ip := range r.IPs {
		out = append(out, ip.Address.String())
	}
	return out
}

func ippool(t *testing.T, name string) *wbv1.IPPool {
	t.Helper()
	p := &wbv1.IPPool{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: poolNS, Name: name}, p); err != nil {
		t.Fatalf("IPPool %s: %v", name, err)
	}
	return p
}

func reservation(t *testing.T, name string) (*wbv1.OverlappingRangeIPReservation, bool) {
	t.Helper()
	o := &wbv1.OverlappingRangeIPReservation{}
	err := k8s.Get(context.Background(), client.ObjectKey{Namespace: poolNS, Name: name}, o)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return o, true
}

// TestEverySpecVersion: ADD, ADD again, CHECK, STATUS and DEL twice in each spec version,
// the objects checked in whereabouts' format.
func TestEverySpecVersion(t *testing.T) {
	t.Setenv("NODENAME", "node-a")
	for i, v := range []string{"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"} {
		t.Run(v, func(t *testing.T) {
			name := fmt.Sprintf("ver%d", i)
			a := attachment{conf: netConf(v, name, fmt.Sprintf(`"range":"10.60.%d.0/29","gateway":"10.60.%d.1"`, i, i)),
				container: "c-" + name, pod: "pod-" + name}
			res, raw, err := a.add()
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				CNIVersion string `json:"cniVersion"`
			}
			if json.Unmarshal([]byte(raw), &got) != nil || got.CNIVersion != v {
				t.Errorf("result not in version %s: %s", v, raw)
			}
			want := fmt.Sprintf("10.60.%d.2/29", i)
			if got := addrs(res); len(got) != 1 || got[0] != want || res.IPs[0].Gateway.String() != fmt.Sprintf("10.60.%d.1", i) {
				t.Fatalf("ADD gave %v (gateway %v), want %s past the network address and the gateway", got, res.IPs[0].Gateway, want)
			}
			if again := a.mustAdd(t); addrs(again)[0] != want {
				t.Errorf("ADD again gave %v, want the same %s", addrs(again), want)
			}
			pool := ippool(t, name+"-10.60."+fmt.Sprint(i)+".0-29")
			if got := pool.Spec.Allocations; len(got) != 1 || got["2"] != (wbv1.IPAllocation{ContainerID: a.container, PodRef: "tenant/" + a.pod, IfName: "net1"}) {
				t.Errorf("IPPool allocations %+v, want offset 2 for %s", got, a.container)
			}
			if o, ok := reservation(t, fmt.Sprintf("%s-10.60.%d.2", name, i)); !ok || o.Spec.PodRef != "tenant/"+a.pod {
				t.Errorf("reservation %v", o)
			}
			if v >= "0.4.0" {
				if err := a.check(t, v, res); err != nil {
					t.Errorf("CHECK on a held address: %v", err)
				}
				// Whatever removes the allocation (an operator, whereabouts' reconciler), CHECK sees it.
				delete(pool.Spec.Allocations, "2")
				if err := k8s.Update(context.Background(), pool); err != nil {
					t.Fatal(err)
				}
				if err := a.check(t, v, res); err == nil || !strings.Contains(err.Error(), "no longer records it") {
					t.Errorf("CHECK after the allocation went: %v", err)
				}
				pool.Spec.Allocations["2"] = wbv1.IPAllocation{ContainerID: a.container, PodRef: "tenant/" + a.pod, IfName: "net1"}
				if err := k8s.Update(context.Background(), pool); err != nil {
					t.Fatal(err)
				}
			}
			if v == "1.1.0" {
				args := a.cmdArgs()
				if err := testutils.CmdStatus(func() error { return cni.Status(args) }); err != nil {
					t.Errorf("STATUS: %v", err)
				}
			}
			for n := range 2 {
				if err := a.del(); err != nil {
					t.Fatalf("DEL #%d: %v", n+1, err)
				}
			}
			if got := ippool(t, pool.Name).Spec.Allocations; len(got) != 0 {
				t.Errorf("after DEL the pool holds %v", got)
			}
			if _, ok := reservation(t, fmt.Sprintf("%s-10.60.%d.2", name, i)); ok {
				t.Errorf("after DEL the reservation is still there")
			}
		})
	}
}

// TestIPv6OfAnySize: a /32 (whereabouts stops at /65), with an offset past 64 bits.
func TestIPv6OfAnySize(t *testing.T) {
	t.Setenv("NODENAME", "node-a")
	a := attachment{conf: netConf("1.0.0", "v6big", `"range":"fd00:61::/32","range_start":"fd00:61:0:1::"`), container: "c-v6", pod: "pod-v6"}
	res := a.mustAdd(t)
	if got := addrs(res); len(got) != 1 || got[0] != "fd00:61:0:1::/32" {
		t.Fatalf("ADD gave %v", got)
	}
	pool := ippool(t, "v6big-fd00-61---32")
	if _, ok := pool.Spec.Allocations["18446744073709551616"]; !ok {
		t.Errorf("allocations %v, want the offset 2^64", pool.Spec.Allocations)
	}
	if _, ok := reservation(t, "v6big-fd00-61-0-1--0"); !ok {
		t.Errorf("no reservation named as whereabouts names fd00:61:0:1::")
	}
	b := attachment{conf: a.conf, container: "c-v6b", pod: "pod-v6b"}
	if got := addrs(b.mustAdd(t)); got[0] != "fd00:61:0:1::1/32" {
		t.Errorf("second ADD gave %v", got)
	}
	for _, x := range []attachment{a, b} {
		if err := x.del(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDualStack(t *testing.T) {
	t.Setenv("NODENAME", "node-a")
	a := attachment{conf: netConf("1.0.0", "dual", `"range":"10.64.0.0/24","gateway":"10.64.0.1","ipRanges":[{"range":"fd00:64::/64"}]`), container: "c-dual", pod: "pod-dual"}
	res := a.mustAdd(t)
	if got := addrs(res); len(got) != 2 || got[0] != "10.64.0.2/24" || got[1] != "fd00:64::1/64" {
		t.Fatalf("ADD gave %v", got)
	}
	if res.IPs[0].Gateway.String() != "10.64.0.1" || res.IPs[1].Gateway != nil {
		t.Errorf("gateways %v %v: the IPv4 gateway belongs to the IPv4 address only", res.IPs[0].Gateway, res.IPs[1].Gateway)
	}
	if err := a.check(t, "1.0.0", res); err != nil {
		t.Errorf("CHECK: %v", err)
	}
	if err := a.del(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"dual-10.64.0.0-24", "dual-fd00-64---64"} {
		if got := ippool(t, p).Spec.Allocations; len(got) != 0 {
			t.Errorf("%s after DEL: %v", p, got)
		}
	}
}

// TestExhaustion: a /30 has two addresses; the third ADD fails naming network and node,
// leaves nothing behind, and puts an Event on the pod.
func TestExhaustion(t *testing.T) {
	t.Setenv("NODENAME", "node-x")
	conf := netConf("1.0.0", "tiny", `"range":"10.65.0.0/30"`)
	for i := range 2 {
		attachment{conf: conf, container: fmt.Sprintf("c-tiny-%d", i), pod: fmt.Sprintf("tiny-%d", i)}.mustAdd(t)
	}
	_, _, err := attachment{conf: conf, container: "c-tiny-2", pod: "tiny-2"}.add()
	if err == nil {
		t.Fatal("a third ADD in a /30 succeeded")
	}
	for _, want := range []string{`network "tiny"`, "node node-x", "no free address", "10.65.0.0/30"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if got := ippool(t, "tiny-10.65.0.0-30").Spec.Allocations; len(got) != 2 {
		t.Errorf("the failed ADD changed the pool: %v", got)
	}
	evs := &corev1.EventList{}
	if err := k8s.List(context.Background(), evs, client.InNamespace("tenant")); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs.Items {
		found = found || (e.InvolvedObject.Name == "tiny-2" && e.Reason == "AddressesExhausted" && strings.Contains(e.Message, "node-x"))
	}
	if !found {
		t.Errorf("no AddressesExhausted Event on pod tiny-2")
	}
}

// TestRequestedAddress: the ips capability and IP= in CNI_ARGS, honoured when free,
// refused with the reason when not.
func TestRequestedAddress(t *testing.T) {
	t.Setenv("NODENAME", "node-a")
	conf := netConf("1.0.0", "req", `"range":"10.66.0.0/24","gateway":"10.66.0.1"`, `"runtimeConfig":{"ips":["10.66.0.7/24"]}`, `"capabilities":{"ips":true}`)
	if got := addrs(attachment{conf: conf, container: "c-req-1", pod: "req-1"}.mustAdd(t)); got[0] != "10.66.0.7/24" {
		t.Errorf("runtimeConfig.ips gave %v", got)
	}
	_, _, err := attachment{conf: conf, container: "c-req-2", pod: "req-2"}.add()
	if err == nil || !strings.Contains(err.Error(), "10.66.0.7 is already allocated") {
		t.Errorf("a taken address: %v", err)
	}
	plain := netConf("1.0.0", "req", `"range":"10.66.0.0/24","gateway":"10.66.0.1"`)
	if got := addrs(attachment{conf: plain, container: "c-req-3", pod: "req-3", args: "IP=10.66.0.9"}.mustAdd(t)); got[0] != "10.66.0.9/24" {
		t.Errorf("IP= gave %v", got)
	}
	for arg, want := range map[string]string{"IP=10.66.0.1": "10.66.0.1 is not an address this node hands out", "IP=10.99.0.1": "in none of network"} {
		if _, _, err := (attachment{conf: plain, container: "c-req-4", pod: "req-4", args: arg}).add(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
	}
}

func TestGC(t *testing.T) {
	t.Setenv("NODENAME", "node-gc")
	conf := netConf("1.1.0", "gcnet", `"range":"10.67.0.0/24"`)
	keep := attachment{conf: conf, container: "c-keep", pod: "keep"}
	gone := attachment{conf: conf, container: "c-gone", pod: "gone"}
	keep.mustAdd(t)
	gone.mustAdd(t)
	gc := map[string]any{}
	_ = json.Unmarshal(conf, &gc)
	gc["cni.dev/valid-attachments"] = []types.GCAttachment{{ContainerID: "c-keep", IfName: "net1"}}
	b, _ := json.Marshal(gc)
	args := &skel.CmdArgs{StdinData: b}
	if err := cni.GC(args); err != nil {
		t.Fatal(err)
	}
	got := ippool(t, "gcnet-10.67.0.0-24").Spec.Allocations
	if len(got) != 1 || got["1"].ContainerID != "c-keep" {
		t.Errorf("after GC: %v, want c-keep's only", got)
	}
	if _, ok := reservation(t, "gcnet-10.67.0.2"); ok {
		t.Errorf("GC left the reservation of c-gone")
	}
}

// TestNodeSlice: the node's slice of the NodeSlicePool, whereabouts' per-node pool name,
// the range's prefix length in the result; a node without a slice is told so.
func TestNodeSlice(t *testing.T) {
	slicePool(t, "slicenet", "10.68.0.0/24", "/26", wbv1.NodeSliceAllocation{NodeName: "node-a", SliceRange: "10.68.0.0/26"}, wbv1.NodeSliceAllocation{NodeName: "node-b", SliceRange: "10.68.0.64/26"})
	conf := netConf("1.0.0", "slicenet", `"range":"10.68.0.0/24","node_slice_size":"/26"`)
	t.Setenv("NODENAME", "node-b")
	if got := addrs(attachment{conf: conf, container: "c-slice", pod: "slice"}.mustAdd(t)); got[0] != "10.68.0.65/24" {
		t.Errorf("ADD on node-b gave %v, want the first of its slice with the range's prefix", got)
	}
	if got := ippool(t, "slicenet-node-b-10.68.0.64-26").Spec.Allocations; len(got) != 1 || got["1"].ContainerID != "c-slice" {
		t.Errorf("node-b's pool: %v", got)
	}
	t.Setenv("NODENAME", "node-c")
	_, _, err := attachment{conf: conf, container: "c-slice-c", pod: "slice-c"}.add()
	if err == nil || !strings.Contains(err.Error(), "node node-c has no slice") {
		t.Errorf("node without slice: %v", err)
	}
}

// TestUnreachableAPIServer: the ADD fails by its timeout and leaves no record behind.
func TestUnreachableAPIServer(t *testing.T) {
	t.Setenv("NODENAME", "node-u")
	kc := tempDir(t) + "/kubeconfig"
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Appendf(nil, `{"cniVersion":"1.0.0","name":"down","type":"bridge","ipam":{"type":"rackwire","range":"10.69.0.0/24",`+
		`"kubernetes":{"kubeconfig":%q},"state_dir":%q,"timeout":"1s"}}`, kc, stateDir)
	_, _, err := attachment{conf: conf, container: "c-down", pod: "down"}.add()
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("ADD with no apiserver: %v", err)
	}
	dirs, _ := filepath.Glob(filepath.Join(stateDir, "node-u", "down@*"))
	var entries []os.DirEntry
	for _, d := range dirs {
		des, _ := os.ReadDir(d)
		entries = append(entries, des...)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left a record: %s", e.Name())
		}
	}
}

// TestConcurrentAcrossNodes: separate plugin processes on three nodes, one pool (no node
// slices): every address once, every reservation matching the pool.
func TestConcurrentAcrossNodes(t *testing.T) {
	conf := netConf("1.0.0", "conc", `"range":"10.70.0.0/24"`)
	const n = 24
	type out struct {
		addr string
		err  error
	}
	results := make(chan out, n)
	for i := range n {
		go func() {
			stdout, err := runPlugin("ADD", conf, fmt.Sprintf("c-conc-%d", i), fmt.Sprintf("node-%d", i%3), "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+fmt.Sprintf("conc-%d", i))
			if err != nil {
				results <- out{err: err}
				return
			}
			r := &current.Result{}
			if err := json.Unmarshal(stdout, r); err != nil || len(r.IPs) != 1 {
				results <- out{err: fmt.Errorf("result %s: %v", stdout, err)}
				return
			}
			results <- out{addr: r.IPs[0].Address.IP.String()}
		}()
	}
	seen := map[string]bool{}
	for range n {
		o := <-results
		if o.err != nil {
			t.Fatal(o.err)
		}
		if seen[o.addr] {
			t.Fatalf("%s handed out twice", o.addr)
		}
		seen[o.addr] = true
	}
	pool := ippool(t, "conc-10.70.0.0-24")
	if len(pool.Spec.Allocations) != n {
		t.Errorf("pool holds %d allocations, want %d", len(pool.Spec.Allocations), n)
	}
	for key := range pool.Spec.Allocations {
		a, err := cni.AtOffset(netip.MustParsePrefix("10.70.0.0/24"), key)
		if err != nil || !seen[a.String()] {
			t.Errorf("pool entry %s (%v) is no ADD's", key, a)
		}
		if _, ok := reservation(t, cni.ReservationName("conc", a)); !ok {
			t.Errorf("%s has no reservation", a)
		}
	}
}

// TestWriteBehindOnOneNode: node-slice ADDs from separate processes answer once their
// reservation exists; the flusher they start writes every entry into the node's pool, and
// concurrent DELs, waiting for entries being written, leave the pool and reservations empty.
func TestWriteBehindOnOneNode(t *testing.T) {
	ctx := context.Background()
	slicePool(t, "wbnet", "10.72.0.0/16", "/24", wbv1.NodeSliceAllocation{NodeName: "node-w", SliceRange: "10.72.3.0/24"})
	conf := netConf("1.1.0", "wbnet", `"range":"10.72.0.0/16","node_slice_size":"/24"`)
	const n = 20
	run := func(verb string) []string {
		out := make(chan string, n)
		errs := make(chan error, n)
		for i := range n {
			go func() {
				stdout, err := runPlugin(verb, conf, fmt.Sprintf("c-wb-%d", i), "node-w", fmt.Sprintf("K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=wb-%d", i))
				if err != nil {
					errs <- err
					return
				}
				r := &current.Result{}
				if verb == "ADD" {
					if err := json.Unmarshal(stdout, r); err != nil {
						errs <- err
						return
					}
					out <- r.IPs[0].Address.IP.String()
					return
				}
				out <- ""
			}()
		}
		var got []string
		for range n {
			select {
			case a := <-out:
				got = append(got, a)
			case err := <-errs:
				t.Fatal(err)
			}
		}
		return got
	}
	seen := map[string]bool{}
	for _, a := range run("ADD") {
		if seen[a] || !netip.MustParsePrefix("10.72.3.0/24").Contains(netip.MustParseAddr(a)) {
			t.Fatalf("%s twice or outside the node's slice", a)
		}
		seen[a] = true
	}
	poolName := "wbnet-node-w-10.72.3.0-24"
	eventually(t, func() error {
		p := &wbv1.IPPool{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: poolName}, p); err != nil {
			return err
		}
		if len(p.Spec.Allocations) != n {
			return fmt.Errorf("pool holds %d of %d", len(p.Spec.Allocations), n)
		}
		for key, al := range p.Spec.Allocations {
			a, _ := cni.AtOffset(netip.MustParsePrefix("10.72.3.0/24"), key)
			if !seen[a.String()] || !strings.HasPrefix(al.ContainerID, "c-wb-") {
				return fmt.Errorf("entry %s %+v is no ADD's", key, al)
			}
		}
		return nil
	})
	run("DEL")
	eventually(t, func() error {
		if got := ippool(t, poolName).Spec.Allocations; len(got) != 0 {
			return fmt.Errorf("pool still holds %v", got)
		}
		for a := range seen {
			if _, ok := reservation(t, cni.ReservationName("wbnet", netip.MustParseAddr(a))); ok {
				return fmt.Errorf("reservation of %s left", a)
			}
		}
		return nil
	})
}

// eventually retries f for a bounded while: what a flusher process writes lands after the
// verb that started it has answered.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestLogFile(t *testing.T) {
	t.Setenv("NODENAME", "node-l")
	logFile := tempDir(t) + "/rackwire.log"
	a := attachment{conf: netConf("1.0.0", "logged", fmt.Sprintf(`"range":"10.73.0.0/24","log_file":%q`, logFile)), container: "c-log", pod: "log", args: "IP=10.99.0.1"}
	args := a.cmdArgs()
	if _, _, err := testutils.CmdAddWithArgs(args, func() error { return cni.Logged("ADD", cni.Add)(args) }); err == nil {
		t.Fatal("ADD of an address outside the ranges succeeded")
	}
	b, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(b), `ADD network "logged" container c-log interface net1: ips: 10.99.0.1 is in none`) {
		t.Errorf("log file: %q %v", b, err)
	}
}

// TestShortLivedPodsInAFullSlice: pods that come and go before their pool entry is written
// give their addresses back to the node's view, and a view that looks full is checked
// against the pool before an ADD fails (the benchmark found a false exhaustion).
func TestShortLivedPodsInAFullSlice(t *testing.T) {
	slicePool(t, "shortnet", "10.75.0.0/24", "/29", wbv1.NodeSliceAllocation{NodeName: "node-s", SliceRange: "10.75.0.8/29"})
	conf := netConf("1.1.0", "shortnet", `"range":"10.75.0.0/24","node_slice_size":"/29"`)
	args := func(id string) string { return "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=" + id }
	// Six addresses in the slice: five held, one for a pod that comes and goes.
	for i := range 5 {
		if _, err := runPlugin("ADD", conf, fmt.Sprintf("c-long-%d", i), "node-s", args(fmt.Sprintf("long-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		id := fmt.Sprintf("c-short-%d", i)
		if _, err := runPlugin("ADD", conf, id, "node-s", args(id)); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if _, err := runPlugin("DEL", conf, id, "node-s", args(id)); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
	_, err := runPlugin("ADD", conf, "c-long-5", "node-s", args("long-5"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runPlugin("ADD", conf, "c-long-6", "node-s", args("long-6")); err == nil || !strings.Contains(err.Error(), "no free address") {
		t.Errorf("a seventh pod in a /29: %v", err)
	}
}

// TestStaleViewReadBehind: an ADD goes on with a view of the pool older than its TTL, and
// the flusher reads the pool behind it, so an address freed elsewhere (a reconciler, an
// operator) comes back without any ADD paying for the read.
func TestStaleViewReadBehind(t *testing.T) {
	ctx := context.Background()
	slicePool(t, "staleview", "10.76.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-v", SliceRange: "10.76.0.16/28"})
	slice := netip.MustParsePrefix("10.76.0.16/28")
	poolName := "staleview-node-v-10.76.0.16-28"
	conf := netConf("1.1.0", "staleview", `"range":"10.76.0.0/24","node_slice_size":"/28"`)
	add := func(id string) netip.Addr { return addProcess(t, conf, "node-v", id) }
	first := add("c-sv-0")
	view := filepath.Join(netDir(t, "node-v", "staleview"), ".pool-"+poolName)
	add("c-sv-1")
	eventually(t, func() error {
		p := &wbv1.IPPool{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: poolName}, p); err != nil {
			return err
		}
		if n := len(p.Spec.Allocations); n != 2 {
			return fmt.Errorf("pool holds %d of 2", n)
		}
		return nil
	})
	// Freed behind the node's back, as whereabouts' ip-reconciler does: read again on a
	// conflict, since the flusher's last write (stripping managedFields) may land after the
	// read.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := ippool(t, poolName)
		delete(p.Spec.Allocations, cni.Offset(slice, first))
		return k8s.Update(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
	o, _ := reservation(t, cni.ReservationName("staleview", first))
	if err := k8s.Delete(ctx, o); err != nil {
		t.Fatal(err)
	}
	// An hour old: the header line says when the pool was read.
	flusherGone(t, filepath.Dir(view))
	b, err := os.ReadFile(view)
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	var v map[string]any
	if err != nil || json.Unmarshal(head, &v) != nil {
		t.Fatalf("the node's view of the pool: %v %s", err, b)
	}
	v["read"] = time.Now().Add(-time.Hour)
	if head, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(view, append(append(head, '\n'), rest...), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := add("c-sv-2"); got == first {
		t.Errorf("the ADD read the pool itself instead of going on with the view")
	}
	eventually(t, func() error {
		b, err := os.ReadFile(view)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		var v struct {
			Read time.Time `json:"read"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &v); err != nil {
			return err
		}
		taken := map[string]bool{}
		for _, l := range lines[1:] {
			taken[l[1:]] = l[0] == '+'
			if l[0] == '-' {
				delete(taken, l[1:])
			}
		}
		if time.Since(v.Read) > time.Minute || taken[cni.Offset(slice, first)] || len(taken) != 2 {
			return fmt.Errorf("view not read again: %s", b)
		}
		return nil
	})
	if got := add("c-sv-3"); got != first {
		t.Errorf("after the read behind, the next ADD got %s, not the freed %s", got, first)
	}
}

// TestSliceReadBehind: an ADD goes on with a slice read 10 to 30 s ago while the flusher
// reads the NodeSlicePool again; past 30 s the ADD reads it itself.
func TestSliceReadBehind(t *testing.T) {
	ctx := context.Background()
	nsp := slicePool(t, "slicebehind", "10.77.0.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: "node-r", SliceRange: "10.77.0.16/28"}, wbv1.NodeSliceAllocation{NodeName: "", SliceRange: "10.77.0.32/28"})
	conf := netConf("1.1.0", "slicebehind", `"range":"10.77.0.0/24","node_slice_size":"/28"`)
	add := func(id string) netip.Addr { return addProcess(t, conf, "node-r", id) }
	var sliceFile string
	// age makes the node's slice the given one, read d ago. It runs with no flusher alive
	// (flusherGone), and sets the slice too: a flusher that lived past the slice's 10 s
	// and read the NodeSlicePool behind the test's back has left another one.
	age := func(slice netip.Prefix, d time.Duration) {
		t.Helper()
		flusherGone(t, filepath.Dir(sliceFile))
		b, err := os.ReadFile(sliceFile)
		var v map[string]any
		if err != nil || json.Unmarshal(b, &v) != nil {
			t.Fatalf("the node's slice: %v %s", err, b)
		}
		v["slice"], v["read"] = slice.String(), time.Now().Add(-d)
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sliceFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old, moved := netip.MustParsePrefix("10.77.0.16/28"), netip.MustParsePrefix("10.77.0.32/28")
	if a := add("c-sb-0"); !old.Contains(a) {
		t.Fatalf("first ADD: %s outside %s", a, old)
	}
	sliceFile = filepath.Join(netDir(t, "node-r", "slicebehind"), ".slice")
	// Re-sliced: the node now holds the other slice.
	nsp.Status.Allocations = []wbv1.NodeSliceAllocation{{NodeName: "", SliceRange: "10.77.0.16/28"}, {NodeName: "node-r", SliceRange: "10.77.0.32/28"}}
	if err := k8s.Update(ctx, nsp); err != nil {
		t.Fatal(err)
	}
	age(old, 15*time.Second)
	if a := add("c-sb-1"); !old.Contains(a) {
		t.Errorf("a 15 s old slice: the ADD read it itself (%s)", a)
	}
	eventually(t, func() error {
		if b, err := os.ReadFile(sliceFile); err != nil || !strings.Contains(string(b), moved.String()) {
			return fmt.Errorf("slice not read again: %s %v", b, err)
		}
		return nil
	})
	if a := add("c-sb-2"); !moved.Contains(a) {
		t.Errorf("after the read behind: %s outside %s", a, moved)
	}
	// Moved back, and the slice read 40 s ago: the ADD reads it before it allocates.
	nsp.Status.Allocations = []wbv1.NodeSliceAllocation{{NodeName: "node-r", SliceRange: "10.77.0.16/28"}, {NodeName: "", SliceRange: "10.77.0.32/28"}}
	if err := k8s.Update(ctx, nsp); err != nil {
		t.Fatal(err)
	}
	age(moved, 40*time.Second)
	if a := add("c-sb-3"); !old.Contains(a) {
		t.Errorf("a 40 s old slice was used: %s outside %s", a, old)
	}
}

// netDir is the node's state directory of the network whose network_name is name.
func netDir(t *testing.T, node, name string) string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(stateDir, node, name+"@*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("state directories of %s on %s: %v %v", name, node, dirs, err)
	}
	return dirs[0]
}

// flusherGone waits until no flusher runs for the state directory, so that what the test
// makes stale stays so until the next verb. The lock alone does not say so: a flusher an
// ADD started has exec'd before the ADD exits, but on a loaded machine it may not have
// taken the lock yet, and would then read the pools behind the test's back.
func flusherGone(t *testing.T, dir string) {
	t.Helper()
	eventually(t, func() error {
		if pid := flusherProcess(dir); pid != "" {
			return fmt.Errorf("flusher process %s of %s still runs", pid, dir)
		}
		f, err := os.OpenFile(filepath.Join(dir, ".flusher"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			return fmt.Errorf("a flusher runs: %w", err)
		}
		return unix.Flock(int(f.Fd()), unix.LOCK_UN)
	})
}

// flusherProcess is the pid of a live `rackwire flush <dir>` process, or "".
func flusherProcess(dir string) string {
	if pids := flusherProcesses(dir); len(pids) > 0 {
		return pids[0]
	}
	return ""
}

// flusherProcesses are the pids of the live `rackwire flush <dir> [--locked]` processes.
func flusherProcesses(dir string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) >= 3 && args[1] == "flush" && args[2] == dir {
			if st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
				continue // exited, not yet reaped
			}
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

// slicePool creates a network's NodeSlicePool with the given slices, as the manager writes it.
func slicePool(t *testing.T, name, rng, size string, allocs ...wbv1.NodeSliceAllocation) *wbv1.NodeSlicePool {
	t.Helper()
	nsp := &wbv1.NodeSlicePool{}
	nsp.Name, nsp.Namespace = name, poolNS
	nsp.Spec = wbv1.NodeSlicePoolSpec{Range: rng, SliceSize: size}
	nsp.Status.Allocations = allocs
	if err := k8s.Create(context.Background(), nsp); err != nil {
		t.Fatal(err)
	}
	return nsp
}

// addProcess runs ADD in a plugin process for pod id on node and returns its address.
func addProcess(t *testing.T, conf []byte, node, id string) netip.Addr {
	t.Helper()
	return addProcessArgs(t, conf, node, id, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id)
}

// addProcessArgs is addProcess with the CNI_ARGS given.
func addProcessArgs(t *testing.T, conf []byte, node, id, args string) netip.Addr {
	t.Helper()
	out, err := runPlugin("ADD", conf, id, node, args)
	if err != nil {
		t.Fatal(err)
	}
	r := &current.Result{}
	if err := json.Unmarshal(out, r); err != nil {
		t.Fatal(err)
	}
	a, _ := netip.AddrFromSlice(r.IPs[0].Address.IP)
	return a.Unmap()
}
