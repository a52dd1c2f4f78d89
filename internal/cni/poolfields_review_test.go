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
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rackwire/rackwire/internal/controlplane"
)

// stripCounter fronts the suite's apiserver and counts the patches of an IPPool that touch
// its managedFields: the plugin's strips.
func stripCounter(t *testing.T) (kubeconfig string, strips *atomic.Int64) {
	t.Helper()
	strips = &atomic.Int64{}
	kubeconfig = newProxy(t, func(w http.ResponseWriter, r *http.Request, forward http.Handler) {
		if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/ippools/") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			if bytes.Contains(body, []byte("/metadata/managedFields")) {
				strips.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		forward.ServeHTTP(w, r)
	})
	return kubeconfig, strips
}

// TestAnInterfaceNamedManagedFieldsSendsNoStrip: the interface name is the tenant's (a
// Multus network selection names it) and "managedFields" is a valid one. A pool recording
// it holds no managedFields after its create's strip, and no write to it is followed by
// another strip: each would be one more request on the apiserver, failed, per write.
func TestAnInterfaceNamedManagedFieldsSendsNoStrip(t *testing.T) {
	const name = "mfname"
	viaProxy, strips := stripCounter(t)
	conf := bytes.ReplaceAll(netConf("1.1.0", name, `"range":"10.104.0.0/24"`), []byte(strconv.Quote(kubeconfig)), []byte(strconv.Quote(viaProxy)))
	pool := name + "-10.104.0.0-24"
	tenant := attachment{conf: conf, container: "c-mfname-0", ifName: "managedFields", pod: "c-mfname-0"}
	tenant.mustAdd(t)
	untracked(t, pool)
	if n := strips.Load(); n != 1 {
		t.Fatalf("the pool's create was followed by %d strips, want 1", n)
	}
	other := attachment{conf: conf, container: "c-mfname-1", pod: "c-mfname-1"}
	other.mustAdd(t)
	if err := other.del(); err != nil {
		t.Fatal(err)
	}
	if got := ippool(t, pool).Spec.Allocations; len(got) != 1 || got["1"].IfName != "managedFields" {
		t.Fatalf("allocations %v, want the tenant's alone", got)
	}
	if n := strips.Load() - 1; n != 0 {
		t.Fatalf("%d strips sent for a pool without managedFields, whose entry names an interface managedFields", n)
	}
	if err := tenant.del(); err != nil {
		t.Fatal(err)
	}
	untracked(t, pool)
}

// TestWhereaboutsKeepsUsingAPoolItCreatedAndRackwireStripped: whereabouts v0.9.4 creates a
// pool (with managedFields, as every create), rackwire's first write to it strips them, and
// the whereabouts binary still allocates from it and releases into it, its writes tracked no
// more; every entry stays as written.
func TestWhereaboutsKeepsUsingAPoolItCreatedAndRackwireStripped(t *testing.T) {
	const name = "wbmf"
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "hack/cni-bins.sh")).Output()
	if err != nil {
		t.Fatalf("the whereabouts binary: %v", err)
	}
	whereabouts := filepath.Join(strings.TrimSpace(string(out)), "whereabouts")
	flat := filepath.Join(tempDir(t), "whereabouts.conf")
	if err := os.WriteFile(flat, fmt.Appendf(nil, `{"kubernetes":{"kubeconfig":%q}}`, kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	wbConf := fmt.Appendf(nil, `{"cniVersion":"1.0.0","name":%q,"type":"bridge","ipam":{"type":"whereabouts","range":"10.105.0.0/24","network_name":%q,"configuration_path":%q}}`,
		name+"-wb", name, flat)
	rwConf := netConf("1.1.0", name+"-rw", `"range":"10.105.0.0/24","whereabouts_lease":true`)
	rwConf = bytes.Replace(rwConf, []byte(`"network_name":"`+name+`-rw"`), []byte(`"network_name":"`+name+`"`), 1)
	wb := func(verb, id string) {
		t.Helper()
		cmd := exec.Command(whereabouts)
		cmd.Env = append(os.Environ(), "CNI_COMMAND="+verb, "CNI_CONTAINERID="+id, "CNI_NETNS=/var/run/netns/"+id,
			"CNI_IFNAME=net1", "CNI_PATH="+filepath.Dir(whereabouts), "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=tenant;K8S_POD_NAME="+id)
		cmd.Stdin = bytes.NewReader(wbConf)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("whereabouts %s %s: %v: %s", verb, id, err, out)
		}
	}
	pool := name + "-10.105.0.0-24"
	wb("ADD", "c-wbmf-0")
	if p := ippool(t, pool); len(p.ManagedFields) == 0 || len(p.Spec.Allocations) != 1 {
		t.Fatalf("whereabouts made pool %s with managedFields %v and allocations %v: want some of both", pool, p.ManagedFields, p.Spec.Allocations)
	}
	rw := attachment{conf: rwConf, container: "c-wbmf-1", pod: "c-wbmf-1"}
	rw.mustAdd(t)
	untracked(t, pool)
	wb("ADD", "c-wbmf-2")
	want := map[string]string{"1": "c-wbmf-0", "2": "c-wbmf-1", "3": "c-wbmf-2"}
	p := ippool(t, pool)
	if len(p.ManagedFields) != 0 {
		t.Fatalf("whereabouts' write to the stripped pool is tracked again: %v", p.ManagedFields)
	}
	if len(p.Spec.Allocations) != len(want) {
		t.Fatalf("allocations %v, want %v", p.Spec.Allocations, want)
	}
	for k, id := range want {
		if a := p.Spec.Allocations[k]; a.ContainerID != id || a.PodRef != "tenant/"+id {
			t.Fatalf("allocation %s is %+v, want %s's", k, a, id)
		}
	}
	wb("DEL", "c-wbmf-0")
	if err := rw.del(); err != nil {
		t.Fatal(err)
	}
	wb("DEL", "c-wbmf-2")
	eventually(t, func() error {
		p := ippool(t, pool)
		if len(p.Spec.Allocations) != 0 || len(p.ManagedFields) != 0 {
			return fmt.Errorf("pool %s holds %v and %d managedFields entries, want neither", pool, p.Spec.Allocations, len(p.ManagedFields))
		}
		return nil
	})
}
