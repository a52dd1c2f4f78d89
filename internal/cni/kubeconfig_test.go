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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// seen is what the test apiserver saw of one request.
type seen struct {
	header http.Header
	client string // the client certificate's CommonName
	proto  string
}

// kubeconfigServer is a TLS server that answers every request with an empty JSON object and
// records what it saw; ca is its certificate in PEM.
func kubeconfigServer(t *testing.T) (srv *httptest.Server, ca []byte, got chan seen) {
	t.Helper()
	got = make(chan seen, 16)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{header: r.Header.Clone(), proto: r.Proto}
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			s.client = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		got <- s
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), got
}

// clientPair is a self-signed client certificate for cn and its key, in PEM.
func clientPair(t *testing.T, cn string) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestKubeconfigCredentials: each way a kubeconfig gives the plugin its identity reaches the
// apiserver as client-go would send it, files named relative to the kubeconfig are found
// beside it, and the namespace is the context's, else kube-system.
func TestKubeconfigCredentials(t *testing.T) {
	srv, ca, got := kubeconfigServer(t)
	cert, key := clientPair(t, "node-1")
	dir := t.TempDir()
	// A credential program that answers for the cluster it was told of, and only then.
	credential := "#!/bin/sh\n" +
		"case \"$KUBERNETES_EXEC_INFO\" in *'\"server\":\"" + srv.URL + "\"'*) ;; *) echo \"no cluster info: $KUBERNETES_EXEC_INFO\" >&2; exit 1;; esac\n" +
		"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"'$TOKEN_PREFIX'-exec\"}}'\n"
	for name, data := range map[string][]byte{"ca.crt": ca, "token": []byte("file-token\n"), "client.crt": cert, "client.key": key, "credential": []byte(credential)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, cluster, user, namespace string
		check                          func(s seen) string
	}{
		{"inline token and CA", "certificate-authority-data: " + b64(ca), "token: abc", "tenant-pools", func(s seen) string {
			return want(s.header.Get("Authorization"), "Bearer abc")
		}},
		{"token file and CA file beside the kubeconfig", "certificate-authority: ca.crt", "tokenFile: token", "", func(s seen) string {
			return want(s.header.Get("Authorization"), "Bearer file-token")
		}},
		{"tokenFile wins over token", "certificate-authority: ca.crt", "token: old\n    tokenFile: token", "", func(s seen) string {
			return want(s.header.Get("Authorization"), "Bearer file-token")
		}},
		{"client certificate data", "certificate-authority-data: " + b64(ca), "client-certificate-data: " + b64(cert) + "\n    client-key-data: " + b64(key), "", func(s seen) string {
			return want(s.client, "node-1") + want(s.header.Get("Authorization"), "")
		}},
		{"client certificate files", "certificate-authority: " + filepath.Join(dir, "ca.crt"), "client-certificate: client.crt\n    client-key: client.key", "", func(s seen) string {
			return want(s.client, "node-1")
		}},
		{"basic auth", "certificate-authority: ca.crt", "username: u\n    password: p", "", func(s seen) string {
			return want(s.header.Get("Authorization"), "Basic "+b64([]byte("u:p")))
		}},
		{"exec credential plugin beside the kubeconfig", "certificate-authority: ca.crt", "exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./credential\n      env: [{name: TOKEN_PREFIX, value: from}]\n      interactiveMode: Never\n      provideClusterInfo: true", "", func(s seen) string {
			return want(s.header.Get("Authorization"), "Bearer from-exec")
		}},
		{"impersonation", "insecure-skip-tls-verify: true", "token: abc\n    as: system:serviceaccount:kube-system:cni\n    as-groups: [g1, g2]\n    as-uid: \"42\"", "", func(s seen) string {
			return want(s.header.Get("Impersonate-User"), "system:serviceaccount:kube-system:cni") +
				want(strings.Join(s.header.Values("Impersonate-Group"), ","), "g1,g2") + want(s.header.Get("Impersonate-Uid"), "42")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := ""
			if tc.namespace != "" {
				ns = "\n    namespace: " + tc.namespace
			}
			path := filepath.Join(dir, "kubeconfig")
			kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + srv.URL + "\n    " + tc.cluster +
				"\nusers:\n- name: u\n  user:\n    " + tc.user + "\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u" + ns +
				"\ncurrent-context: x\npreferences: {}\n"
			if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
				t.Fatal(err)
			}
			// client-go reads it as the plugin does: the same file serves whereabouts binaries.
			if _, err := clientcmd.BuildConfigFromFlags("", path); err != nil {
				t.Fatalf("client-go refuses the kubeconfig: %v", err)
			}
			k, err := newKube(path)
			if err != nil {
				t.Fatal(err)
			}
			wantNS := tc.namespace
			if wantNS == "" {
				wantNS = "kube-system"
			}
			if k.namespace != wantNS {
				t.Errorf("namespace %q, want %q", k.namespace, wantNS)
			}
			if err := k.get(context.Background(), "/api", nil); err != nil {
				t.Fatal(err)
			}
			s := <-got
			if msg := tc.check(s) + want(s.header.Get("User-Agent"), userAgent) + want(s.proto, "HTTP/1.1"); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func want(got, want string) string {
	if got != want {
		return "got " + got + ", want " + want + "; "
	}
	return ""
}

// TestKubeconfigRefusals: what the plugin cannot or will not use fails the verb with the key
// and the part of the kubeconfig at fault, never as a request the apiserver turns down: at
// once, or, for a credential program that fails, at the first request, which does not retry
// it until the verb's time is up.
func TestKubeconfigRefusals(t *testing.T) {
	dir := t.TempDir()
	const ca = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==" // a PEM header and nothing else
	for _, tc := range []struct{ name, kubeconfig, wantErr string }{
		{"exec program fails", "users:\n- name: u\n  user:\n    exec: {command: /bin/false, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}\n", `user "u": exec: /bin/false: exit status 1`},
		{"exec program answers no credential", "users:\n- name: u\n  user:\n    exec: {command: /bin/echo, args: ['{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{}}'], apiVersion: client.authentication.k8s.io/v1beta1}\n", "has no token and no client certificate"},
		{"exec of a removed apiVersion", "users:\n- name: u\n  user:\n    exec: {command: /bin/true, apiVersion: client.authentication.k8s.io/v1alpha1}\n", `apiVersion "client.authentication.k8s.io/v1alpha1" is not`},
		{"exec that needs a terminal", "users:\n- name: u\n  user:\n    exec: {command: /bin/true, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Always}\n", "needs a terminal"},
		{"auth provider", "users:\n- name: u\n  user:\n    auth-provider: {name: oidc}\n", `user "u": auth-provider is not supported`},
		{"no current context", "current-context: \"\"\n", "current-context is not set"},
		{"current context names nothing", "current-context: other\n", `current-context "other" names no context`},
		{"cluster missing", "contexts:\n- name: x\n  context: {cluster: gone, user: u}\n", `cluster "gone" is not in clusters`},
		{"user missing", "contexts:\n- name: x\n  context: {cluster: c, user: gone}\n", `user "gone" is not in users`},
		{"no server", "clusters:\n- name: c\n  cluster: {insecure-skip-tls-verify: true}\n", `cluster "c": server is not set`},
		{"CA as file and data", "clusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1, certificate-authority: /dev/null, certificate-authority-data: " + ca + "}\n", "are both set"},
		{"CA with insecure", "clusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1, insecure-skip-tls-verify: true, certificate-authority-data: " + ca + "}\n", "insecure-skip-tls-verify is not allowed"},
		{"CA not PEM", "clusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1, certificate-authority-data: " + ca + "}\n", "holds no PEM certificate"},
		{"CA file missing", "clusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1, certificate-authority: nothing.crt}\n", filepath.Join(dir, "nothing.crt")},
		{"token file missing", "users:\n- name: u\n  user: {tokenFile: no-token}\n", `user "u": tokenFile`},
		{"key without certificate", "users:\n- name: u\n  user: {client-key-data: " + ca + "}\n", `user "u": client-certificate and client-key`},
		{"token and basic auth", "users:\n- name: u\n  user: {token: t, username: u, password: p}\n", "username/password and a token are both set"},
		{"not YAML", "clusters: [\n", "kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := map[string]string{
				"clusters":        "clusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1, insecure-skip-tls-verify: true}\n",
				"users":           "users:\n- name: u\n  user: {token: t}\n",
				"contexts":        "contexts:\n- name: x\n  context: {cluster: c, user: u}\n",
				"current-context": "current-context: x\n",
			}
			for k := range base {
				if strings.HasPrefix(tc.kubeconfig, k+":") {
					base[k] = tc.kubeconfig
				}
			}
			kc := base["clusters"] + base["users"] + base["contexts"] + base["current-context"]
			if !strings.Contains(kc, tc.kubeconfig) {
				kc += tc.kubeconfig
			}
			path := filepath.Join(dir, "kubeconfig")
			if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
				t.Fatal(err)
			}
			k, err := newKube(path)
			if err == nil {
				// A credential program runs when a request needs it, and fails that.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err = k.get(ctx, "/api", nil)
			}
			if err == nil || !strings.Contains(err.Error(), kubeconfigKey) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, kubeconfigKey, tc.wantErr)
			}
		})
	}
}

// TestKubeconfigTokenFileRotates: a long-lived flusher sends the token the kubelet rotated
// into the file once the last read is a minute old, and keeps the last token while the file
// cannot be read.
func TestKubeconfigTokenFileRotates(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := &authHeaders{tokenFile: file}
	bearer := func() string {
		h := http.Header{}
		_, _ = a.set(context.Background(), h)
		return h.Get("Authorization")
	}
	if got := bearer(); got != "Bearer one" {
		t.Fatalf("first token %q", got)
	}
	if err := os.WriteFile(file, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := bearer(); got != "Bearer one" {
		t.Errorf("token read again before a minute: %q", got)
	}
	a.readAt = a.readAt.Add(-tokenFileRefresh)
	if got := bearer(); got != "Bearer two" {
		t.Errorf("rotated token not picked up: %q", got)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	a.readAt = a.readAt.Add(-tokenFileRefresh)
	if got := bearer(); got != "Bearer two" {
		t.Errorf("token while the file is gone: %q, want the last one read", got)
	}
}
