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
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	wbv1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
	"github.com/rackwire/rackwire/internal/cni"
)

// TestBurstOfAddsStartsOneFlusher: ADDs that end at once on a node start one flusher between
// them. Each used to find the flusher lock free while the first flusher was still starting,
// and started its own: every extra one read its configuration and the apiserver, then waited.
// The flusher's pool write is held at a gate until the burst is over: no flusher can go idle
// and exit meanwhile, and every one the ADDs started is still there to be counted.
func TestBurstOfAddsStartsOneFlusher(t *testing.T) {
	const name, node, burst = "onefl", "node-onefl", 16
	slicePool(t, name, "10.85.0.0/24", "/26", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.85.0.0/26"})
	pool := name + "-" + node + "-10.85.0.0-26"
	conf := netConf("1.1.0", name, `"range":"10.85.0.0/24","node_slice_size":"/26"`)
	addProcess(t, conf, node, "c-onefl-0") // makes the state directory and the pool
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	g := newGate(t, func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/ippools/"+pool)
	})
	var wg sync.WaitGroup
	errs := make(chan error, burst)
	for i := 1; i <= burst; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("c-onefl-%d", i)
			if _, err := runPlugin("ADD", g.through(conf), id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	g.waitHeld(t)
	// Every ADD has exited, and a started process has exec'd before its starter goes on.
	if pids := flusherProcesses(dir); len(pids) != 1 {
		t.Errorf("flusher processes %v for one node's burst of %d ADDs, want one", pids, burst)
	}
	g.open()
	for i := 0; i <= burst; i++ {
		id := fmt.Sprintf("c-onefl-%d", i)
		if _, err := runPlugin("DEL", conf, id, node, "K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id); err != nil {
			t.Fatal(err)
		}
	}
	flusherGone(t, dir)
}

// TestAnAddBesideAProbeStartsAFlusher: an ADD whose kick finds the flusher lock held by a
// DEL, GC or ADD that only looks for a flusher (flusherAlive holds it for an instant) still
// starts one. It took the probe for a flusher and started none: its entry stayed out of the
// pool until some later ADD or DEL of the node came by, which on a quiet node may be never.
// The probe is held across the ADD here, the instant stretched: the interleaving is the
// test's, not the scheduler's.
func TestAnAddBesideAProbeStartsAFlusher(t *testing.T) {
	const name, node = "probekick", "node-pk"
	slicePool(t, name, "10.85.1.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.85.1.16/28"})
	slice, pool := netip.MustParsePrefix("10.85.1.16/28"), name+"-"+node+"-10.85.1.16-28"
	conf := netConf("1.1.0", name, `"range":"10.85.1.0/24","node_slice_size":"/28"`)
	first := addProcess(t, conf, node, "c-pk-0") // makes the state directory and the pool
	poolEntry(t, pool, slice, first, "c-pk-0")
	dir := netDir(t, node, name)
	flusherGone(t, dir)
	release, ok := cni.HoldFlusherProbe(dir)
	if !ok {
		t.Fatal("the flusher lock is held with no flusher left")
	}
	a := addProcess(t, conf, node, "c-pk-1")
	// A started flusher has exec'd before its ADD exits; it waits for the probe to go.
	started := len(flusherProcesses(dir)) > 0
	release()
	if !started {
		t.Fatal("the ADD took a probe of the flusher lock for a flusher and started none: its entry is left unwritten")
	}
	poolEntry(t, pool, slice, a, "c-pk-1")
	flusherGone(t, dir)
}

// TestHandedOverLockStaysWithTheFlusher: the flusher lock an ADD hands over (fd 3) is not
// passed on to what the flusher runs, here a kubeconfig's exec credential plugin. A helper
// that kept it, outliving a flusher that was killed, would hold the node's flusher lock with
// no flusher: every ADD after it takes the lock for a flusher and starts none.
func TestHandedOverLockStaysWithTheFlusher(t *testing.T) {
	const name, node = "execcred", "node-ec"
	slicePool(t, name, "10.85.2.0/24", "/28", wbv1.NodeSliceAllocation{NodeName: node, SliceRange: "10.85.2.16/28"})
	slice, pool := netip.MustParsePrefix("10.85.2.16/28"), name+"-"+node+"-10.85.2.16-28"
	tmp := tempDir(t)
	leaked := filepath.Join(tmp, "leaked")
	helper := filepath.Join(tmp, "credential")
	script := "#!/bin/sh\n" +
		"case \"$(readlink /proc/$$/fd/3)\" in */.flusher) echo \"$$\" >>" + leaked + ";; esac\n" +
		`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"unused"}}'` + "\n"
	if err := os.WriteFile(helper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// client-go runs a credential plugin only over TLS: a TLS front of the suite's apiserver,
	// which forwards with the suite's credentials, not the helper's token.
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Transport: rt, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Del("Authorization")
	}}
	srv := httptest.NewTLSServer(proxy)
	t.Cleanup(srv.Close)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["tls"] = &clientcmdapi.Cluster{Server: srv.URL, InsecureSkipTLSVerify: true}
	kc.AuthInfos["tls"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		Command: helper, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	kc.Contexts["tls"] = &clientcmdapi.Context{Cluster: "tls", AuthInfo: "tls"}
	kc.CurrentContext = "tls"
	kcPath := filepath.Join(tmp, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kcPath); err != nil {
		t.Fatal(err)
	}
	conf := bytes.ReplaceAll(netConf("1.1.0", name, `"range":"10.85.2.0/24","node_slice_size":"/28"`),
		[]byte(strconv.Quote(kubeconfig)), []byte(strconv.Quote(kcPath)))
	a := addProcess(t, conf, node, "c-ec-0")
	poolEntry(t, pool, slice, a, "c-ec-0")
	flusherGone(t, netDir(t, node, name))
	if b, err := os.ReadFile(leaked); err == nil {
		t.Fatalf("credential helpers %s ran holding the flusher lock the flusher was handed", strings.Fields(string(b)))
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
