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
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestStaleAddSparesTheRetriedAttachment: an ADD's reservation has landed and the ADD is in
// its window without the node's lock (the apiserver's answer on its way, or sleep_for_race,
// slept there on node-slice networks). Meanwhile the runtime's DEL of that attachment and
// its retried ADD (same container and interface) both run. The first ADD then fails, as it
// must, but its rollback freed by name what it held: the reservation of the same address,
// now the retried ADD's (same container, same interface), and the record of the attachment,
// now the retried ADD's. The retried ADD answered with an address nothing held any more.
// A GC that finds the attachment invalid does as the DEL. Without either, both ADDs answer the same address, which the flusher writes.
func TestStaleAddSparesTheRetriedAttachment(t *testing.T) {
	t.Run("DEL", func(t *testing.T) { staleAdd(t, "staleadd", "10.85.5", "DEL") })
	t.Run("GC", func(t *testing.T) { staleAdd(t, "staleadd3", "10.85.7", "GC") })
	t.Run("none", func(t *testing.T) { staleAdd(t, "staleadd2", "10.85.6", "") })
}

// staleAdd runs TestStaleAddSparesTheRetriedAttachment on network name, in the /24 net
// (three octets); verb (DEL, GC of no valid attachment, or none) comes before the retried ADD.
func staleAdd(t *testing.T, name, net, verb string) {
	const node, id = "node-sa", "c-stale"
	slicePool(t, name, net+".0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: net + ".16/28"})
	slice, pool := netip.MustParsePrefix(net+".16/28"), name+"-"+node+"-"+net+".16-28"
	conf := netConf("1.1.0", name, `"range":"`+net+`.0/24","node_slice_size":"/28"`)
	podArgs := "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME=" + id
	// The first ADD's reservation create is forwarded; its answer is held until opened.
	kc, held, open := holdReservationAnswer(t)
	first := bytes.ReplaceAll(conf, []byte(strconv.Quote(kubeconfig)), []byte(strconv.Quote(kc)))
	type answer struct {
		out []byte
		err error
	}
	added := make(chan answer, 1)
	go func() {
		out, err := runPlugin("ADD", first, id, node, podArgs)
		added <- answer{out, err}
	}()
	<-held
	switch verb {
	case "DEL":
		if _, err := runPlugin("DEL", conf, id, node, podArgs); err != nil {
			t.Fatal(err)
		}
	case "GC":
		if _, err := runPlugin("GC", gcConf(t, conf), "", node, ""); err != nil {
			t.Fatal(err)
		}
	}
	del := verb != ""
	again := addProcess(t, conf, node, id)
	dir := netDir(t, node, name)
	open()
	a := <-added
	switch {
	case del && a.err == nil:
		t.Errorf("the first ADD answered after its attachment's %s: %s", verb, a.out)
	case !del && a.err != nil:
		t.Errorf("the first ADD failed: %v", a.err)
	case !del:
		r := &current.Result{}
		if err := json.Unmarshal(a.out, r); err != nil || len(r.IPs) != 1 {
			t.Fatalf("first ADD's result %s: %v", a.out, err)
		}
		if got, _ := netip.AddrFromSlice(r.IPs[0].Address.IP.To4()); got != again {
			t.Errorf("the first ADD answered %s, its retry %s", got, again)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, id+"_net1")); err != nil {
		t.Errorf("the retried ADD's record is gone once the first ADD failed: %v", err)
	}
	if o, ok := reservation(t, cni.ReservationName(name, again)); !ok || o.Spec.ContainerID != id {
		t.Errorf("the retried ADD answered %s, and its reservation is gone once the first ADD failed", again)
	}
	poolEntry(t, pool, slice, again, id)
	if _, err := runPlugin("DEL", conf, id, node, podArgs); err != nil {
		t.Fatal(err)
	}
	poolEntry(t, pool, slice, again, "")
	recordGone(t, dir, id)
	flusherGone(t, dir)
}

// holdReservationAnswer starts a front of the suite's apiserver (its kubeconfig returned) that
// forwards the first reservation create and holds its answer until open is called: the ADD
// that sent it is then in its window without the node's lock, its reservation landed, as it
// is while it sleeps sleep_for_race. held is closed once the create has landed.
func holdReservationAnswer(t *testing.T) (kc string, held <-chan struct{}, open func()) {
	t.Helper()
	landed, opened := make(chan struct{}), make(chan struct{})
	var first, openOnce atomic.Bool
	kc = newProxy(t, func(w http.ResponseWriter, r *http.Request, forward http.Handler) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/overlappingrangeipreservations") || !first.CompareAndSwap(false, true) {
			forward.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		forward.ServeHTTP(rec, r)
		close(landed)
		<-opened
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
	open = func() {
		if openOnce.CompareAndSwap(false, true) {
			close(opened)
		}
	}
	// Registered after the proxy's, so run before it: a held answer lets the proxy close.
	t.Cleanup(open)
	return kc, landed, open
}
