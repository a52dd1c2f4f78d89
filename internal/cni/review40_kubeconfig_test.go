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

package cni

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// r40Server is a TLS server recording every request's headers; answer decides the status.
type r40Server struct {
	srv  *httptest.Server
	ca   []byte
	mu   sync.Mutex
	reqs []*http.Request
}

func newR40Server(t *testing.T, answer func(r *http.Request) int) *r40Server {
	t.Helper()
	s := &r40Server{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(context.Background()))
		s.mu.Unlock()
		code := http.StatusOK
		if answer != nil {
			code = answer(r)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code == http.StatusOK {
			_, _ = w.Write([]byte(`{}`))
		} else {
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":401,"reason":"Unauthorized"}`))
		}
	}))
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	s.ca = r40PEM(s.srv)
	return s
}

func (s *r40Server) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		return nil
	}
	return s.reqs[len(s.reqs)-1]
}

func r40PEM(srv *httptest.Server) []byte {
	return []byte("-----BEGIN CERTIFICATE-----\n" + b64(srv.Certificate().Raw) + "\n-----END CERTIFICATE-----\n")
}

func r40Write(t *testing.T, dir, name, data string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// r40ClientGo sends GET urlPath with client-go's transport for the kubeconfig at path, as
// whereabouts (and rackwire before a36cb02) did.
func r40ClientGo(t *testing.T, path, urlPath string) (*http.Response, error) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("client-go refuses the kubeconfig: %v", err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatalf("client-go builds no client: %v", err)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+urlPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	return resp, err
}

// TestReview40ImpersonateExtraKeyEscaping: an as-user-extra key holding a character that is
// legal in a URL path segment but not in an HTTP header name (':', '@', '=') is escaped by
// client-go's headerKeyEscape, and so by the plugin: left as is (url.PathEscape, before),
// Go's transport refused to send the request, and kube.do retried that until the verb timed
// out.
func TestReview40ImpersonateExtraKeyEscaping(t *testing.T) {
	s := newR40Server(t, nil)
	dir := t.TempDir()
	r40Write(t, dir, "ca.crt", string(s.ca), 0o600)
	path := r40Write(t, dir, "kubeconfig", "apiVersion: v1\nkind: Config\n"+
		"clusters:\n- name: c\n  cluster:\n    server: "+s.srv.URL+"\n    certificate-authority: ca.crt\n"+
		"users:\n- name: u\n  user:\n    token: abc\n    as: alice\n    as-user-extra:\n      \"acme.com/tenant:id\": [\"t1\"]\n      \"owner@acme.com\": [\"yes\"]\n"+
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", 0o600)

	// client-go: sent, with the keys escaped.
	if _, err := r40ClientGo(t, path, "/api"); err != nil {
		t.Fatalf("client-go: %v", err)
	}
	cg := s.last().Header
	if cg.Get("Impersonate-Extra-Acme.com%2ftenant%3aid") != "t1" && cg.Get("Impersonate-Extra-Acme.com%2Ftenant%3Aid") != "t1" {
		t.Logf("client-go's headers: %v", cg)
	}

	k, err := newKube(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := k.get(ctx, "/api", nil); err != nil {
		t.Fatalf("client-go sends this kubeconfig's requests (Impersonate-Extra keys escaped); the plugin sends none: %v", err)
	}
	if got := s.last().Header.Values("Impersonate-Extra-Owner%40acme.com"); len(got) != 1 || got[0] != "yes" {
		t.Errorf("Impersonate-Extra for owner@acme.com: %v (all: %v)", got, s.last().Header)
	}
}

// r40ExecScript is a credential program that counts its runs in $DIR/count, keeps each
// run's KUBERNETES_EXEC_INFO in $DIR/info.N and answers token tN.
const r40ExecScript = `#!/bin/sh
n=$(cat "$DIR/count" 2>/dev/null || echo 0)
n=$((n+1))
echo $n > "$DIR/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$DIR/info.$n"
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t'$n'"}}'
`

func r40ExecKubeconfig(t *testing.T, dir, server, clusterExtra string) string {
	t.Helper()
	r40Write(t, dir, "cred", r40ExecScript, 0o700)
	return r40Write(t, dir, "kubeconfig", "apiVersion: v1\nkind: Config\n"+
		"clusters:\n- name: c\n  cluster:\n    server: "+server+"\n    certificate-authority: ca.crt\n"+clusterExtra+
		"users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./cred\n      interactiveMode: Never\n      provideClusterInfo: true\n      env: [{name: DIR, value: \""+dir+"\"}]\n"+
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", 0o600)
}

// TestReview40ExecClusterInfo: with provideClusterInfo, client-go's KUBERNETES_EXEC_INFO
// carries the cluster's CA bundle (certificate-authority-data, read from the CA file too)
// and its proxy-url; a credential program that talks to the cluster (a TokenRequest, a
// pinniped-style login) needs the CA. The plugin's is the same (before, it sent the server
// alone).
func TestReview40ExecClusterInfo(t *testing.T) {
	s := newR40Server(t, nil)
	cluster := func(dir string) map[string]any {
		b, err := os.ReadFile(filepath.Join(dir, "info.1"))
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Spec struct {
				Cluster map[string]any `json:"cluster"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v.Spec.Cluster
	}
	const proxy = "    proxy-url: http://127.0.0.1:3128\n"
	cgDir, ourDir := t.TempDir(), t.TempDir()
	for _, d := range []string{cgDir, ourDir} {
		r40Write(t, d, "ca.crt", string(s.ca), 0o600)
	}
	// client-go runs the program on the first request (which then fails at the proxy).
	_, _ = r40ClientGo(t, r40ExecKubeconfig(t, cgDir, s.srv.URL, proxy), "/api")
	k, err := newKube(r40ExecKubeconfig(t, ourDir, s.srv.URL, proxy))
	if err != nil {
		t.Fatal(err)
	}
	// The plugin too runs it on the first request, which fails at the proxy.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = k.get(ctx, "/api", nil)
	cg, ours := cluster(cgDir), cluster(ourDir)
	keys := func(m map[string]any) (ks []string) {
		for k := range m {
			ks = append(ks, k)
		}
		return ks
	}
	t.Logf("client-go's spec.cluster keys: %v; the plugin's: %v", keys(cg), keys(ours))
	for _, key := range []string{"server", "certificate-authority-data", "proxy-url", "insecure-skip-tls-verify", "tls-server-name"} {
		if !reflect.DeepEqual(cg[key], ours[key]) {
			cgv := fmt.Sprint(cg[key])
			if len(cgv) > 40 {
				cgv = cgv[:40] + "..."
			}
			t.Errorf("KUBERNETES_EXEC_INFO spec.cluster.%s: plugin %v, client-go %v", key, ours[key], cgv)
		}
	}
}

// TestReview40ExecRefreshOn401: client-go runs the credential program again after the
// apiserver answers 401 with its credential (exec roundTripper.maybeRefreshCreds), so the
// next request carries a fresh token; a token without expirationTimestamp that the
// apiserver stops taking (revoked, the signing key rotated) is replaced, by the plugin too:
// before, a flusher, which lives while entries come, failed every request after.
func TestReview40ExecRefreshOn401(t *testing.T) {
	s := newR40Server(t, func(r *http.Request) int {
		if r.Header.Get("Authorization") == "Bearer t1" {
			return http.StatusUnauthorized
		}
		return http.StatusOK
	})
	cgDir, ourDir := t.TempDir(), t.TempDir()
	for _, d := range []string{cgDir, ourDir} {
		r40Write(t, d, "ca.crt", string(s.ca), 0o600)
	}
	cgPath := r40ExecKubeconfig(t, cgDir, s.srv.URL, "")
	cfg, err := clientcmd.BuildConfigFromFlags("", cgPath)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var cgCodes []int
	for range 2 {
		resp, err := hc.Get(s.srv.URL + "/api")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		cgCodes = append(cgCodes, resp.StatusCode)
	}
	t.Logf("client-go: %v", cgCodes)

	k, err := newKube(r40ExecKubeconfig(t, ourDir, s.srv.URL, ""))
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for range 2 {
		err := k.once(context.Background(), http.MethodGet, "/api", "", nil, nil)
		ours = append(ours, fmt.Sprintf("err=%v unauthorized=%v sent %q", err, apierrors.IsUnauthorized(err), s.last().Header.Get("Authorization")))
	}
	if cgCodes[1] == http.StatusOK && !strings.HasPrefix(ours[1], "err=<nil>") {
		t.Errorf("after a 401, client-go's next request is sent with a new credential (codes %v); the plugin's fails again: %q", cgCodes, ours)
	}
}

// TestReview40StaticTokenWins: a user with a token needs no tokenFile to exist beside it (the
// file only refreshes the token when it can be read), and never runs its exec plugin
// (exec.UpdateTransportConfig): client-go sends the token, and so does the plugin, which
// refused both kubeconfigs before.
func TestReview40StaticTokenWins(t *testing.T) {
	for _, tc := range []struct{ name, beside string }{
		{"a tokenFile that is missing", "tokenFile: /var/run/secrets/rotated/token-not-here"},
		{"an exec plugin that would fail", "exec: {command: /bin/false, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newR40Server(t, nil)
			dir := t.TempDir()
			r40Write(t, dir, "ca.crt", string(s.ca), 0o600)
			path := r40Write(t, dir, "kubeconfig", "apiVersion: v1\nkind: Config\n"+
				"clusters:\n- name: c\n  cluster:\n    server: "+s.srv.URL+"\n    certificate-authority: ca.crt\n"+
				"users:\n- name: u\n  user:\n    token: static\n    "+tc.beside+"\n"+
				"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", 0o600)
			if _, err := r40ClientGo(t, path, "/api"); err != nil {
				t.Fatalf("client-go: %v", err)
			}
			if got := s.last().Header.Get("Authorization"); got != "Bearer static" {
				t.Fatalf("client-go sent %q", got)
			}
			k, err := newKube(path)
			if err != nil {
				t.Fatalf("client-go uses the token; the plugin refuses: %v", err)
			}
			if err := k.get(context.Background(), "/api", nil); err != nil {
				t.Fatal(err)
			}
			if got := s.last().Header.Get("Authorization"); got != "Bearer static" {
				t.Errorf("the plugin sent %q, want the token", got)
			}
		})
	}
}
