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
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// gate is a plain-HTTP front of the suite's apiserver: it forwards every request with the
// suite's credentials, and holds the first one hold matches until the test opens the gate.
// A configuration that names its kubeconfig makes a flusher process wait, inside its flush,
// on the request the test chose, and the test acts meanwhile: the interleaving is the test's,
// not the scheduler's.
type gate struct {
	kubeconfig string
	// held is closed when the matching request has come and waits.
	held chan struct{}
	open func()
}

func newGate(t *testing.T, hold func(*http.Request) bool) *gate {
	t.Helper()
	g := &gate{held: make(chan struct{})}
	opened := make(chan struct{})
	var openOnce, holdOnce sync.Once
	g.open = func() { openOnce.Do(func() { close(opened) }) }
	g.kubeconfig = newProxy(t, func(w http.ResponseWriter, r *http.Request, forward http.Handler) {
		first := false
		if hold(r) {
			holdOnce.Do(func() { first = true })
		}
		if first {
			close(g.held)
			<-opened
		}
		forward.ServeHTTP(w, r)
	})
	// Registered after the proxy's, so run before it: a held request lets the proxy close.
	t.Cleanup(g.open)
	return g
}

// newProxy starts a plain-HTTP front of the suite's apiserver and returns a kubeconfig for
// it: serve answers each request, forward sends it on with the suite's credentials.
func newProxy(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, forward http.Handler)) string {
	t.Helper()
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
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, Transport: rt}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, r, proxy) }))
	t.Cleanup(srv.Close)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["gate"] = &clientcmdapi.Cluster{Server: srv.URL}
	kc.AuthInfos["gate"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["gate"] = &clientcmdapi.Context{Cluster: "gate", AuthInfo: "gate"}
	kc.CurrentContext = "gate"
	path := filepath.Join(tempDir(t), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// through is conf with its requests sent through the gate.
func (g *gate) through(conf []byte) []byte {
	return bytes.ReplaceAll(conf, []byte(strconv.Quote(kubeconfig)), []byte(strconv.Quote(g.kubeconfig)))
}

// waitHeld waits until the chosen request has come.
func (g *gate) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-g.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the request the gate holds never came")
	}
}
