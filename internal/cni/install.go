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
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Install is what the DaemonSet runs on every node: it puts the plugin binary into the
// node's CNI bin directory, writes the flat file, kubeconfig and nodename the plugin reads
// from /etc/cni/net.d/rackwire.d/, and keeps the kubeconfig's token current as the
// service-account token rotates (the kubelet refreshes the projected file; the plugin on
// the host cannot read it there).
type Install struct {
	// Self is the binary to copy (the running executable).
	Self string
	// BinDir and ConfDir are the host's /opt/cni/bin and /etc/cni/net.d, as mounted.
	BinDir, ConfDir string
	// HostConfDir is ConfDir as the plugin on the host sees it, for the paths written into
	// the flat file.
	HostConfDir string
	// HostStateDir and HostLogDir are, on the node, the directories a configuration's
	// state_dir and log_file may name (the DaemonSet mounts them so the kubelet makes them);
	// with HostConfDir they are written beside the binary as its roots (see roots.go).
	HostStateDir, HostLogDir string
	// TokenFile and CAFile are the pod's service-account credentials; Server is the
	// apiserver as the host reaches it.
	TokenFile, CAFile, Server string
	// Namespace is where the plugin keeps its objects (the manager's --nodeslice-namespace).
	Namespace string
	// Node is the node's name (spec.nodeName through the downward API).
	Node string
	// Every is how often the token is looked at.
	Every time.Duration
}

// Run installs, then keeps the kubeconfig current until ctx ends.
func (in Install) Run(ctx context.Context) error {
	if err := in.installBinary(); err != nil {
		return err
	}
	dir := filepath.Join(in.ConfDir, "rackwire.d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	hostDir := filepath.Join(in.HostConfDir, "rackwire.d")
	flat := fmt.Appendf(nil, `{"kubernetes":{"kubeconfig":%q}}`+"\n", filepath.Join(hostDir, "rackwire.kubeconfig"))
	for name, data := range map[string][]byte{"rackwire.conf": flat, "nodename": []byte(in.Node + "\n")} {
		if err := writeIfChanged(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	for {
		if err := in.writeKubeconfig(filepath.Join(dir, "rackwire.kubeconfig")); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(in.Every):
		}
	}
}

func (in Install) installBinary() error {
	dst := filepath.Join(in.BinDir, PluginType)
	// The roots first: the new binary never runs with the old ones.
	roots := Roots{State: []string{in.HostStateDir}, Log: []string{in.HostLogDir}, Config: []string{in.HostConfDir, ConfRootAlt}}
	if in.HostStateDir == "" || in.HostLogDir == "" || in.HostConfDir == "" {
		roots = DefaultRoots
	}
	if err := WriteRoots(dst, roots); err != nil {
		return err
	}
	src, err := os.Open(in.Self)
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	tmp := dst + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// A rename, so a runtime never executes a half-copied binary.
	return os.Rename(tmp, dst)
}

func (in Install) writeKubeconfig(path string) error {
	token, err := os.ReadFile(in.TokenFile)
	if err != nil {
		return fmt.Errorf("service-account token: %w", err)
	}
	ca, err := os.ReadFile(in.CAFile)
	if err != nil {
		return fmt.Errorf("service-account CA: %w", err)
	}
	kc := &kubeconfigFile{APIVersion: "v1", Kind: "Config", CurrentContext: "rackwire-cni",
		Clusters: []kcNamedCluster{{Name: "local", Cluster: kcCluster{Server: in.Server, CertificateAuthorityData: ca}}},
		Users:    []kcNamedUser{{Name: "rackwire-cni", User: kcUser{Token: string(bytes.TrimSpace(token))}}},
		Contexts: []kcNamedContext{{Name: "rackwire-cni", Context: kcContext{Cluster: "local", User: "rackwire-cni", Namespace: in.Namespace}}},
	}
	data, err := yaml.Marshal(kc)
	if err != nil {
		return err
	}
	return writeIfChanged(path, data, 0o600)
}

// writeIfChanged replaces path atomically when its content differs.
func writeIfChanged(path string, data []byte, mode os.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	// A temporary file of its own: ADDs, DELs and flushers of a node write the same caches at
	// once, and with one shared temporary name a writer renamed another's half-written file
	// into place, or found its own renamed away and failed.
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := writeAndClose(f, data, mode); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// isTempFile says whether name is one of writeIfChanged's temporary files (or an older
// plugin's, named .tmp).
func isTempFile(name string) bool {
	if strings.HasSuffix(name, ".tmp") {
		return true
	}
	i := strings.LastIndex(name, ".tmp-")
	return i >= 0 && i+len(".tmp-") < len(name) && strings.Trim(name[i+len(".tmp-"):], "0123456789") == ""
}

func writeAndClose(f *os.File, data []byte, mode os.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	return errors.Join(err, f.Close())
}
