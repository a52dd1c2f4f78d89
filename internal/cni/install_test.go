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
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// TestInstall: the binary lands in the bin directory, the flat file names the kubeconfig,
// and a rotated token reaches the kubeconfig on the next look.
func TestInstall(t *testing.T) {
	dir := t.TempDir()
	in := Install{
		BinDir: filepath.Join(dir, "bin"), ConfDir: filepath.Join(dir, "net.d"), HostConfDir: "/etc/cni/net.d",
		TokenFile: filepath.Join(dir, "token"), CAFile: filepath.Join(dir, "ca.crt"), Server: "https://10.0.0.1:443",
		Namespace: "kube-system", Node: "node-1", Every: 20 * time.Millisecond, Self: filepath.Join(dir, "self"),
		HostStateDir: "/srv/rackwire/state", HostLogDir: "/srv/rackwire/log",
	}
	for name, data := range map[string]string{"self": "#!binary", "token": "first\n", "ca.crt": "CA"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(in.BinDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	kcPath := filepath.Join(in.ConfDir, "rackwire.d", "rackwire.kubeconfig")
	token := func() string {
		kc, err := clientcmd.LoadFromFile(kcPath)
		if err != nil {
			return ""
		}
		return kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo].Token
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for token() != want {
			if time.Now().After(deadline) {
				t.Fatalf("kubeconfig token %q, want %q", token(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("first")
	if b, err := os.ReadFile(filepath.Join(in.BinDir, "rackwire")); err != nil || string(b) != "#!binary" {
		t.Errorf("binary: %q %v", b, err)
	}
	// The roots beside the binary are the install's directories, and the plugin reads them.
	withRoots(t, DefaultRoots)
	if err := LoadRoots(filepath.Join(in.BinDir, "rackwire")); err != nil {
		t.Fatal(err)
	}
	if want := (Roots{State: []string{"/srv/rackwire/state"}, Log: []string{"/srv/rackwire/log"}, Config: []string{"/etc/cni/net.d", ConfRootAlt}}); !reflect.DeepEqual(AllowedRoots, want) {
		t.Errorf("roots %+v, want %+v", AllowedRoots, want)
	}
	flat, _ := os.ReadFile(filepath.Join(in.ConfDir, "rackwire.d", "rackwire.conf"))
	if !strings.Contains(string(flat), `"/etc/cni/net.d/rackwire.d/rackwire.kubeconfig"`) {
		t.Errorf("flat file %s does not name the kubeconfig as the host sees it", flat)
	}
	kc, err := clientcmd.LoadFromFile(kcPath)
	if err != nil {
		t.Fatal(err)
	}
	if ctxt := kc.Contexts[kc.CurrentContext]; ctxt.Namespace != "kube-system" || kc.Clusters[ctxt.Cluster].Server != "https://10.0.0.1:443" {
		t.Errorf("kubeconfig context %+v", ctxt)
	}
	if err := os.WriteFile(in.TokenFile, []byte("rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("rotated")
}
