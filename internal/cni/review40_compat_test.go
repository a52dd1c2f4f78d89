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
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// r40ConnectProxy is an HTTP CONNECT proxy counting the tunnels it opened.
func r40ConnectProxy(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		n.Add(1)
		w.WriteHeader(http.StatusOK)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			_ = up.Close()
			return
		}
		go func() { _, _ = io.Copy(up, buf); _ = up.Close() }()
		go func() { _, _ = io.Copy(conn, up); _ = conn.Close() }()
	}))
	t.Cleanup(p.Close)
	return p, &n
}

// TestReview40UnusualKubeconfig: an infra team's valid kubeconfig (YAML anchors and a merge
// key, a server on IPv6 with a path prefix and a trailing slash, a CA bundle of several
// certificates, tls-server-name, disable-compression, proxy-url, an as-user-extra key with
// '/', a relative tokenFile) reaches the server as client-go sends it.
func TestReview40UnusualKubeconfig(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Clone(context.Background()))
		mu.Unlock()
		_, _ = w.Write([]byte(`{}`))
	}))
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	srv.Listener = l
	srv.StartTLS()
	t.Cleanup(srv.Close)
	proxy, tunnels := r40ConnectProxy(t)
	other, _ := clientPair(t, "some-other-ca")
	dir := t.TempDir()
	r40Write(t, dir, "bundle.crt", string(other)+string(r40PEM(srv))+string(other), 0o600)
	r40Write(t, dir, "token", "  tok-from-file \n", 0o600)
	for _, compress := range []bool{false, true} {
		mu.Lock()
		got = nil
		mu.Unlock()
		dc := "false"
		if compress {
			dc = "true"
		}
		path := r40Write(t, dir, "kubeconfig", `apiVersion: v1
kind: Config
x-shared: &shared
  certificate-authority: bundle.crt
  tls-server-name: example.com
  proxy-url: `+proxy.URL+`
  disable-compression: `+dc+`
clusters:
- name: prod
  cluster:
    <<: *shared
    server: `+srv.URL+`/k8s/prod/
users:
- name: cni
  user:
    tokenFile: token
    as: system:serviceaccount:kube-system:rackwire
    as-user-extra:
      acme.com/team: [net]
contexts:
- name: main
  context:
    cluster: prod
    user: cni
    namespace: pools
current-context: main
`, 0o600)
		if _, err := r40ClientGo(t, path, "/api"); err != nil {
			t.Fatalf("client-go: %v", err)
		}
		k, err := newKube(path)
		if err != nil {
			t.Fatal(err)
		}
		if k.namespace != "pools" {
			t.Errorf("namespace %q", k.namespace)
		}
		if err := k.get(context.Background(), "/api", nil); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if len(got) != 2 {
			t.Fatalf("%d requests", len(got))
		}
		cg, ours := got[0], got[1]
		mu.Unlock()
		if ours.URL.Path != cg.URL.Path || ours.URL.Path != "/k8s/prod/api" {
			t.Errorf("path: plugin %q, client-go %q", ours.URL.Path, cg.URL.Path)
		}
		for _, h := range []string{"Authorization", "Impersonate-User", "Impersonate-Extra-Acme.com%2fteam", "Accept-Encoding"} {
			if ours.Header.Get(h) != cg.Header.Get(h) {
				t.Errorf("compress %v: %s: plugin %q, client-go %q", compress, h, ours.Header.Get(h), cg.Header.Get(h))
			}
		}
		if ours.TLS == nil || ours.TLS.ServerName != "example.com" {
			t.Errorf("SNI %v", ours.TLS)
		}
	}
	if tunnels.Load() != 4 {
		t.Errorf("%d CONNECTs through proxy-url, want 4", tunnels.Load())
	}
}

// TestReview40TokenFileSymlinkSwap: a projected token the kubelet rotates by swapping its
// ..data symlink is followed, named relative to the kubeconfig.
func TestReview40TokenFileSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "sa")
	for _, v := range []string{"..a", "..b"} {
		if err := os.MkdirAll(filepath.Join(tok, v), 0o700); err != nil {
			t.Fatal(err)
		}
		r40Write(t, filepath.Join(tok, v), "token", "tok"+v[2:]+"\n", 0o600)
	}
	if err := os.Symlink("..a", filepath.Join(tok, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/token", filepath.Join(tok, "token")); err != nil {
		t.Fatal(err)
	}
	path := r40Write(t, dir, "kubeconfig", "clusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: u\n  user: {tokenFile: sa/token}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", 0o600)
	cfg, err := loadKubeconfig(path)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	_, _ = cfg.auth.set(context.Background(), h)
	if h.Get("Authorization") != "Bearer toka" {
		t.Fatalf("%q", h.Get("Authorization"))
	}
	if err := os.Symlink("..b", filepath.Join(tok, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tok, "..data_tmp"), filepath.Join(tok, "..data")); err != nil {
		t.Fatal(err)
	}
	cfg.auth.mu.Lock()
	cfg.auth.readAt = cfg.auth.readAt.Add(-tokenFileRefresh)
	cfg.auth.mu.Unlock()
	_, _ = cfg.auth.set(context.Background(), h)
	if h.Get("Authorization") != "Bearer tokb" {
		t.Errorf("after the swap: %q", h.Get("Authorization"))
	}
}

// TestReview40InstallerKubeconfigForClientGo: the installer's kubeconfig is what
// clientcmd.Write made of the same content before a36cb02, as client-go reads them.
func TestReview40InstallerKubeconfigForClientGo(t *testing.T) {
	dir := t.TempDir()
	ca, _ := clientPair(t, "cluster-ca")
	in := Install{TokenFile: r40Write(t, dir, "token", "  eyJ.tok: en\n", 0o600), CAFile: r40Write(t, dir, "ca.crt", string(ca), 0o600),
		Server: "https://[fd00::1]:6443", Namespace: "kube-system"}
	path := filepath.Join(dir, "rackwire.kubeconfig")
	if err := in.writeKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	now, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: in.Server, CertificateAuthorityData: ca}
	kc.AuthInfos["rackwire-cni"] = &clientcmdapi.AuthInfo{Token: "eyJ.tok: en"}
	kc.Contexts["rackwire-cni"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "rackwire-cni", Namespace: in.Namespace}
	kc.CurrentContext = "rackwire-cni"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	before, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*clientcmdapi.Config{now, before} {
		for _, x := range c.Clusters {
			x.LocationOfOrigin = ""
		}
		for _, x := range c.AuthInfos {
			x.LocationOfOrigin = ""
		}
		for _, x := range c.Contexts {
			x.LocationOfOrigin = ""
		}
	}
	if !reflect.DeepEqual(now, before) {
		t.Errorf("client-go reads the installer's kubeconfig as\n%+v\nwant\n%+v", now, before)
	}
	if cfg, err := clientcmd.BuildConfigFromFlags("", path); err != nil || cfg.BearerToken != "eyJ.tok: en" {
		t.Errorf("client-go: %v %q", err, cfg.BearerToken)
	}
}

// TestReview40EventShape: the plugin's Event reads back as the core/v1 Event it sent before.
func TestReview40EventShape(t *testing.T) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	ours := &podEvent{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "p.", Namespace: "ns"},
		InvolvedObject: eventObject{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "p", UID: ktypes.UID("u")},
		Reason:         "R", Message: "m", Type: "Warning",
		Source:         eventSource{Component: "rackwire-cni", Host: "n"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	old := &corev1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "p.", Namespace: "ns"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "p", UID: ktypes.UID("u")},
		Reason:         "R", Message: "m", Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "rackwire-cni", Host: "n"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	b, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	back := &corev1.Event{}
	if err := json.Unmarshal(b, back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, old) {
		t.Errorf("plugin's Event %s reads as\n%+v\nwant\n%+v", b, back, old)
	}
}

// TestReview40LeaseRoundTrip: a Lease with every coordination/v1 field, read into the
// plugin's lease and written back, loses nothing.
func TestReview40LeaseRoundTrip(t *testing.T) {
	now := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
	s, d, n := "h", int32(15), int32(3)
	strategy := coordv1.OldestEmulationVersion
	full := &coordv1.Lease{
		TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: "whereabouts", Namespace: "kube-system", ResourceVersion: "7", UID: "u",
			Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}, OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n", UID: "x"}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "whereabouts", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "coordination.k8s.io/v1"}}},
		Spec: coordv1.LeaseSpec{HolderIdentity: &s, LeaseDurationSeconds: &d, AcquireTime: &now, RenewTime: &now, LeaseTransitions: &n, Strategy: &strategy, PreferredHolder: &s},
	}
	b, _ := json.Marshal(full)
	mid := &lease{}
	if err := json.Unmarshal(b, mid); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(mid)
	back := &coordv1.Lease{}
	if err := json.Unmarshal(b2, back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, full) {
		t.Errorf("lost in the round trip:\n%s\n%s", b, b2)
	}
}

// TestReview40ExecSeesNoExtraFD: the credential program gets stdin, stdout and stderr and
// nothing else of the plugin's, and an empty stdin (not the network configuration).
func TestReview40ExecSeesNoExtraFD(t *testing.T) {
	dir := t.TempDir()
	r40Write(t, dir, "cred", "#!/bin/sh\nls -l /proc/$$/fd > \"$DIR/fdsl\"; ls /proc/$$/fd > \"$DIR/fds\"\ncat > \"$DIR/stdin\"\n"+
		"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"x\"}}'\n", 0o700)
	path := r40Write(t, dir, "kubeconfig", "clusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: u\n  user:\n    exec: {command: ./cred, apiVersion: client.authentication.k8s.io/v1beta1, env: [{name: DIR, value: \""+dir+"\"}]}\n"+
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", 0o600)
	if _, err := loadKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	fds, _ := os.ReadFile(filepath.Join(dir, "fds"))
	stdin, _ := os.ReadFile(filepath.Join(dir, "stdin"))
	// Descriptors the test binary itself inherited without close-on-exec (from whatever ran
	// it) pass to every child, client-go's credential program as well: not the plugin's.
	inherited := map[string]bool{}
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range ents {
			info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(info), "\n") {
				if f, ok := strings.CutPrefix(line, "flags:"); ok {
					if v, err := strconv.ParseUint(strings.TrimSpace(f), 8, 64); err == nil && v&0o2000000 == 0 {
						inherited[e.Name()] = true
					}
				}
			}
		}
	}
	for _, fd := range strings.Fields(string(fds)) {
		if inherited[fd] {
			continue
		}
		switch fd {
		case "0", "1", "2", "10", "11", "12": // 10-12: dash's own (saved stdin, the script, saved stdout)
		default:
			t.Errorf("credential program holds fd %s (all: %q)", fd, fds)
		}
	}
	fdsl, _ := os.ReadFile(filepath.Join(dir, "fdsl"))
	t.Logf("%s", fdsl)

	if len(stdin) != 0 {
		t.Errorf("stdin %q", stdin)
	}
}

// TestReview40ConcurrentAuth: a flusher's concurrent requests set credentials at once (an
// exec credential that expires at once, so every request runs the program again, and the
// TLS client-certificate callback); run with -race.
func TestReview40ConcurrentAuth(t *testing.T) {
	dir := t.TempDir()
	r40Write(t, dir, "cred", "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"x\",\"expirationTimestamp\":\"2000-01-01T00:00:00Z\"}}'\n", 0o700)
	path := r40Write(t, dir, "kubeconfig", "clusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: u\n  user:\n    as: a\n    as-groups: [g]\n    exec: {command: ./cred, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}\n"+
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", 0o600)
	cfg, err := loadKubeconfig(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				h := http.Header{}
				_, _ = cfg.auth.set(context.Background(), h)
				if h.Get("Authorization") != "Bearer x" {
					t.Errorf("%q", h.Get("Authorization"))
				}
				_, _ = cfg.tls.GetClientCertificate(nil)
			}
		}()
	}
	wg.Wait()
}
