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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// execConfig is a kubeconfig user's exec credential plugin (client-go's ExecConfig).
type execConfig struct {
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	Env     []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env,omitempty"`
	APIVersion         string `json:"apiVersion,omitempty"`
	ProvideClusterInfo bool   `json:"provideClusterInfo,omitempty"`
	InteractiveMode    string `json:"interactiveMode,omitempty"`
}

// execCredential is the ExecCredential the plugin sends and the one its program answers.
type execCredential struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Cluster     *execCluster `json:"cluster,omitempty"`
		Interactive bool         `json:"interactive"`
	} `json:"spec"`
	Status *struct {
		ExpirationTimestamp   *time.Time `json:"expirationTimestamp,omitempty"`
		Token                 string     `json:"token,omitempty"`
		ClientCertificateData string     `json:"clientCertificateData,omitempty"`
		ClientKeyData         string     `json:"clientKeyData,omitempty"`
	} `json:"status,omitempty"`
}

type execCluster struct {
	Server                   string          `json:"server"`
	TLSServerName            string          `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool            `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthorityData []byte          `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string          `json:"proxy-url,omitempty"`
	DisableCompression       bool            `json:"disable-compression,omitempty"`
	Config                   json.RawMessage `json:"config,omitempty"`
}

// setExec makes the user's credential program the source of its credentials. The program
// runs when a request first needs them, as with client-go, so a verb that sends nothing runs
// nothing; its answer serves until it expires or the apiserver turns it down.
func (cfg *restConfig) setExec(dir, name string, e *execConfig) error {
	switch e.APIVersion {
	case "client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1":
	default:
		return fmt.Errorf("user %q: exec: apiVersion %q is not client.authentication.k8s.io/v1 or v1beta1", name, e.APIVersion)
	}
	switch e.InteractiveMode {
	case "Never", "IfAvailable":
	case "":
		if e.APIVersion == "client.authentication.k8s.io/v1" {
			return fmt.Errorf("user %q: exec: interactiveMode must be set for apiVersion %s", name, e.APIVersion)
		}
	default:
		return fmt.Errorf("user %q: exec: interactiveMode %q needs a terminal, which a CNI plugin has not", name, e.InteractiveMode)
	}
	if strings.Contains(e.Command, "/") {
		e.Command = resolvePath(dir, e.Command)
	}
	req := &execCredential{APIVersion: e.APIVersion, Kind: "ExecCredential"}
	if e.ProvideClusterInfo {
		req.Spec.Cluster = cfg.cluster
	}
	c := &execSource{config: e, version: e.APIVersion, user: name}
	var err error
	if c.request, err = json.Marshal(req); err != nil {
		return err
	}
	cfg.auth.exec = c
	cfg.tls.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		ctx := context.Background()
		if cri != nil {
			ctx = cri.Context()
		}
		if _, cert, err := c.get(ctx); err == nil && cert != nil {
			return cert, nil
		}
		return &tls.Certificate{}, nil // none: the apiserver then says what is missing
	}
	return nil
}

// execSource runs a credential program and keeps its answer.
type execSource struct {
	config        *execConfig
	version, user string
	request       []byte

	mu   sync.Mutex
	got  *execCredential
	cert *tls.Certificate
}

// credentialError is a credential program that failed: the verb fails with it, naming the
// key, and does not retry as it does what did not reach the apiserver.
type credentialError struct{ error }

// get is the program's answer, run again once it has expired or been turned down.
func (c *execSource) get(ctx context.Context) (*execCredential, *tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.got != nil && (c.got.Status.ExpirationTimestamp == nil || time.Now().Before(*c.got.Status.ExpirationTimestamp)) {
		return c.got, c.cert, nil
	}
	got, cert, err := c.run(ctx)
	if err != nil {
		return nil, nil, credentialError{keyErr(kubeconfigKey, "user %q: exec: %v", c.user, err)}
	}
	c.got, c.cert = got, cert
	return got, cert, nil
}

// turnedDown drops sent, the credential a request the apiserver answered 401 carried, so the
// next request runs the program again (client-go's refresh); a newer answer is kept.
func (c *execSource) turnedDown(sent *execCredential) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.got == sent {
		c.got, c.cert = nil, nil
	}
}

func (c *execSource) run(ctx context.Context) (*execCredential, *tls.Certificate, error) {
	cmd := exec.CommandContext(ctx, c.config.Command, c.config.Args...)
	cmd.Env = append(os.Environ(), "KUBERNETES_EXEC_INFO="+string(c.request))
	for _, e := range c.config.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s: %v: %s", c.config.Command, err, strings.TrimSpace(errOut.String()))
	}
	got := &execCredential{}
	if err := json.Unmarshal(out.Bytes(), got); err != nil {
		return nil, nil, fmt.Errorf("%s: its output is not an ExecCredential: %v", c.config.Command, err)
	}
	switch {
	case got.APIVersion != c.version || got.Kind != "ExecCredential":
		return nil, nil, fmt.Errorf("%s: answered %s %s, want ExecCredential %s", c.config.Command, got.APIVersion, got.Kind, c.version)
	case got.Status == nil || got.Status.Token == "" && got.Status.ClientCertificateData == "":
		return nil, nil, fmt.Errorf("%s: its ExecCredential has no token and no client certificate", c.config.Command)
	}
	if got.Status.ClientCertificateData == "" && got.Status.ClientKeyData == "" {
		return got, nil, nil
	}
	pair, err := tls.X509KeyPair([]byte(got.Status.ClientCertificateData), []byte(got.Status.ClientKeyData))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: its client certificate: %v", c.config.Command, err)
	}
	return got, &pair, nil
}
