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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// The plugin reads its kubeconfig itself rather than through client-go's clientcmd and rest:
// a process lives for one verb, and linking them cost each one about a millisecond of CPU
// before main (their package initialisation and the pages of a larger binary), a tenth of
// what an ADD costs the node. It takes what a node's kubeconfig holds (whereabouts' and the
// installer's: a server, its CA, a token), client certificates, basic auth and
// impersonation and exec credential plugins, with clientcmd's rules where they meet; it
// refuses, naming the key, auth-provider, for which client-go too has no provider built in.

// kubeconfigFile is a kubeconfig (clientcmd's v1 format) as far as the plugin reads it.
type kubeconfigFile struct {
	APIVersion     string           `json:"apiVersion,omitempty"`
	Kind           string           `json:"kind,omitempty"`
	Clusters       []kcNamedCluster `json:"clusters"`
	Contexts       []kcNamedContext `json:"contexts"`
	CurrentContext string           `json:"current-context"`
	Users          []kcNamedUser    `json:"users"`
}

type kcNamedCluster struct {
	Name    string    `json:"name"`
	Cluster kcCluster `json:"cluster"`
}

type kcNamedContext struct {
	Name    string    `json:"name"`
	Context kcContext `json:"context"`
}

type kcNamedUser struct {
	Name string `json:"name"`
	User kcUser `json:"user"`
}

type kcCluster struct {
	Server                   string `json:"server,omitempty"`
	TLSServerName            string `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthority     string `json:"certificate-authority,omitempty"`
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string `json:"proxy-url,omitempty"`
	DisableCompression       bool   `json:"disable-compression,omitempty"`
	Extensions               []struct {
		Name      string          `json:"name"`
		Extension json.RawMessage `json:"extension"`
	} `json:"extensions,omitempty"`
}

// execExtension is the cluster extension client-go hands an exec credential plugin as
// spec.cluster.config.
const execExtension = "client.authentication.k8s.io/exec"

type kcUser struct {
	ClientCertificate     string              `json:"client-certificate,omitempty"`
	ClientCertificateData []byte              `json:"client-certificate-data,omitempty"`
	ClientKey             string              `json:"client-key,omitempty"`
	ClientKeyData         []byte              `json:"client-key-data,omitempty"`
	Token                 string              `json:"token,omitempty"`
	TokenFile             string              `json:"tokenFile,omitempty"`
	Impersonate           string              `json:"as,omitempty"`
	ImpersonateUID        string              `json:"as-uid,omitempty"`
	ImpersonateGroups     []string            `json:"as-groups,omitempty"`
	ImpersonateUserExtra  map[string][]string `json:"as-user-extra,omitempty"`
	Username              string              `json:"username,omitempty"`
	Password              string              `json:"password,omitempty"`
	AuthProvider          json.RawMessage     `json:"auth-provider,omitempty"`
	Exec                  *execConfig         `json:"exec,omitempty"`
}

type kcContext struct {
	Cluster   string `json:"cluster"`
	User      string `json:"user"`
	Namespace string `json:"namespace,omitempty"`
}

// restConfig is what a kubeconfig's current context resolves to.
type restConfig struct {
	server    string
	namespace string
	tls       *tls.Config
	proxy     func(*http.Request) (*url.URL, error)
	compress  bool
	auth      *authHeaders
	// What an exec credential plugin is told of the cluster.
	cluster *execCluster
}

const kubeconfigKey = "ipam.kubernetes.kubeconfig"

// loadKubeconfig reads path and resolves its current context. Errors name the key and the
// kubeconfig's part at fault.
func loadKubeconfig(path string) (*restConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, keyErr(kubeconfigKey, "%v", err)
	}
	kc := &kubeconfigFile{}
	if err := yaml.Unmarshal(data, kc); err != nil {
		return nil, keyErr(kubeconfigKey, "%s: %v", path, err)
	}
	return kc.resolve(path)
}

func (kc *kubeconfigFile) resolve(path string) (*restConfig, error) {
	fail := func(format string, args ...any) error {
		return keyErr(kubeconfigKey, "%s: %s", path, fmt.Sprintf(format, args...))
	}
	if kc.CurrentContext == "" {
		return nil, fail("current-context is not set")
	}
	var ctx *kcContext
	for i := range kc.Contexts {
		if kc.Contexts[i].Name == kc.CurrentContext {
			ctx = &kc.Contexts[i].Context
		}
	}
	if ctx == nil {
		return nil, fail("current-context %q names no context", kc.CurrentContext)
	}
	var cl *kcCluster
	for i := range kc.Clusters {
		if kc.Clusters[i].Name == ctx.Cluster {
			cl = &kc.Clusters[i].Cluster
		}
	}
	if cl == nil {
		return nil, fail("context %q: cluster %q is not in clusters", kc.CurrentContext, ctx.Cluster)
	}
	user := &kcUser{}
	if ctx.User != "" {
		found := false
		for i := range kc.Users {
			if kc.Users[i].Name == ctx.User {
				user, found = &kc.Users[i].User, true
			}
		}
		if !found {
			return nil, fail("context %q: user %q is not in users", kc.CurrentContext, ctx.User)
		}
	}
	cfg := &restConfig{namespace: ctx.Namespace, compress: !cl.DisableCompression}
	if cfg.server, cfg.proxy = strings.TrimSuffix(cl.Server, "/"), http.ProxyFromEnvironment; cfg.server == "" {
		return nil, fail("cluster %q: server is not set", ctx.Cluster)
	}
	if !strings.Contains(cfg.server, "://") {
		cfg.server = "https://" + cfg.server
	}
	if u, err := url.Parse(cfg.server); err != nil || u.Host == "" {
		return nil, fail("cluster %q: server %q is not a URL", ctx.Cluster, cl.Server)
	}
	cfg.cluster = &execCluster{Server: cfg.server, TLSServerName: cl.TLSServerName, InsecureSkipTLSVerify: cl.InsecureSkipTLSVerify,
		ProxyURL: cl.ProxyURL, DisableCompression: cl.DisableCompression}
	for _, e := range cl.Extensions {
		if e.Name == execExtension {
			cfg.cluster.Config = e.Extension
		}
	}
	if cl.ProxyURL != "" {
		p, err := url.Parse(cl.ProxyURL)
		if err != nil || p.Host == "" {
			return nil, fail("cluster %q: proxy-url %q is not a URL", ctx.Cluster, cl.ProxyURL)
		}
		cfg.proxy = http.ProxyURL(p)
	}
	dir := filepath.Dir(path)
	cfg.tls = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cl.TLSServerName, InsecureSkipVerify: cl.InsecureSkipTLSVerify} //nolint:gosec // the kubeconfig's choice, as with client-go
	ca, err := fileOrData(dir, cl.CertificateAuthority, cl.CertificateAuthorityData)
	switch {
	case err != nil:
		return nil, fail("cluster %q: certificate-authority: %v", ctx.Cluster, err)
	case cl.CertificateAuthority != "" && len(cl.CertificateAuthorityData) > 0:
		return nil, fail("cluster %q: certificate-authority and certificate-authority-data are both set", ctx.Cluster)
	case len(ca) > 0 && cl.InsecureSkipTLSVerify:
		return nil, fail("cluster %q: a certificate authority together with insecure-skip-tls-verify is not allowed", ctx.Cluster)
	case len(ca) > 0:
		cfg.cluster.CertificateAuthorityData = ca
		cfg.tls.RootCAs = x509.NewCertPool()
		if !cfg.tls.RootCAs.AppendCertsFromPEM(ca) {
			return nil, fail("cluster %q: certificate-authority holds no PEM certificate", ctx.Cluster)
		}
	}
	if err := cfg.setUser(dir, ctx.User, user); err != nil {
		return nil, fail("%v", err)
	}
	return cfg, nil
}

func (cfg *restConfig) setUser(dir, name string, u *kcUser) error {
	switch {
	case len(u.AuthProvider) > 0 && string(u.AuthProvider) != "null":
		return fmt.Errorf("user %q: auth-provider is not supported; give the plugin a token, tokenFile or client certificate", name)
	case u.ClientCertificate != "" && len(u.ClientCertificateData) > 0:
		return fmt.Errorf("user %q: client-certificate and client-certificate-data are both set", name)
	case u.ClientKey != "" && len(u.ClientKeyData) > 0:
		return fmt.Errorf("user %q: client-key and client-key-data are both set", name)
	case u.Username != "" && (u.Token != "" || u.TokenFile != ""):
		return fmt.Errorf("user %q: username/password and a token are both set", name)
	}
	cert, err := fileOrData(dir, u.ClientCertificate, u.ClientCertificateData)
	if err != nil {
		return fmt.Errorf("user %q: client-certificate: %v", name, err)
	}
	key, err := fileOrData(dir, u.ClientKey, u.ClientKeyData)
	if err != nil {
		return fmt.Errorf("user %q: client-key: %v", name, err)
	}
	if len(cert) > 0 || len(key) > 0 {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return fmt.Errorf("user %q: client-certificate and client-key: %v", name, err)
		}
		cfg.tls.Certificates = []tls.Certificate{pair}
	}
	cfg.auth = &authHeaders{token: u.Token, username: u.Username, password: u.Password,
		as: u.Impersonate, asUID: u.ImpersonateUID, asGroups: u.ImpersonateGroups, asExtra: u.ImpersonateUserExtra}
	// A user with a credential of its own never runs its exec plugin, as with client-go.
	static := u.Token != "" || u.TokenFile != "" || u.Username != "" || len(cfg.tls.Certificates) > 0
	if u.Exec != nil && !static {
		if err := cfg.setExec(dir, name, u.Exec); err != nil {
			return err
		}
	}
	if u.TokenFile != "" {
		cfg.auth.tokenFile = resolvePath(dir, u.TokenFile)
		// Read now, so a missing file fails the verb with its key rather than as a 401;
		// with a token beside it, the file is only the token's refresh, as with client-go.
		if _, err := cfg.auth.fileToken(); err != nil && u.Token == "" {
			return fmt.Errorf("user %q: tokenFile: %v", name, err)
		}
	}
	return nil
}

// fileOrData is a kubeconfig's file reference, resolved as clientcmd does (relative to the
// kubeconfig's directory), or its inline data.
func fileOrData(dir, file string, data []byte) ([]byte, error) {
	if file == "" {
		return data, nil
	}
	return os.ReadFile(resolvePath(dir, file))
}

func resolvePath(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// authHeaders sets a request's credentials. A tokenFile is read again once a minute, as
// client-go does, so a long-lived flusher follows a rotated token; a read that fails keeps
// the last token read.
type authHeaders struct {
	token, tokenFile   string
	username, password string
	as, asUID          string
	asGroups           []string
	asExtra            map[string][]string

	exec *execSource

	mu     sync.Mutex
	cached string
	readAt time.Time
}

const tokenFileRefresh = time.Minute

func (a *authHeaders) fileToken() (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cached != "" && time.Since(a.readAt) < tokenFileRefresh {
		return a.cached, nil
	}
	b, err := os.ReadFile(a.tokenFile)
	if t := string(bytes.TrimSpace(b)); err == nil && t != "" {
		a.cached, a.readAt = t, time.Now()
	} else if a.cached == "" {
		if err == nil {
			err = fmt.Errorf("%s is empty", a.tokenFile)
		}
		return "", err
	}
	return a.cached, nil
}

// set puts the credentials on a request's headers, and says which exec credential it sent.
// An exec plugin that fails fails the request.
func (a *authHeaders) set(ctx context.Context, h http.Header) (*execCredential, error) {
	if a == nil {
		return nil, nil
	}
	token := a.token
	var sent *execCredential
	if a.exec != nil {
		c, _, err := a.exec.get(ctx)
		if err != nil {
			return nil, err
		}
		token, sent = c.Status.Token, c
	}
	if a.tokenFile != "" {
		if t, err := a.fileToken(); err == nil {
			token = t
		}
	}
	switch {
	case token != "":
		h.Set("Authorization", "Bearer "+token)
	case a.username != "":
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(a.username+":"+a.password)))
	}
	if a.as != "" {
		h.Set("Impersonate-User", a.as)
	}
	if a.asUID != "" {
		h.Set("Impersonate-Uid", a.asUID)
	}
	for _, g := range a.asGroups {
		h.Add("Impersonate-Group", g)
	}
	for k, vs := range a.asExtra {
		for _, v := range vs {
			h.Add("Impersonate-Extra-"+headerKeyEscape(k), v)
		}
	}
	return sent, nil
}

// headerKeyEscape makes an extra's key a header name as client-go does: every byte that is
// not a token character, and "%", percent-encoded; the apiserver decodes it back.
func headerKeyEscape(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '%' || !isTokenByte(c) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// isTokenByte is RFC 7230's tchar.
func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// httpClient is the plugin's connection to the apiserver: HTTP/1.1, since a plugin process
// sends one or two requests on a connection of its own, and HTTP/2's connection set-up
// costs both ends more than it brings them.
func (cfg *restConfig) httpClient() *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:               cfg.proxy,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     cfg.tls,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  !cfg.compress,
	}}
}
