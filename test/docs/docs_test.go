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

// Package docs_test checks that what the user documentation names exists: make targets and
// variables, the flags of the manager, devenv and the CNI plugin's installer, files and
// directories of the repository, kubectl resource names, CRD fields, links and their anchors.
package docs_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const root = "../.."

var (
	loadOnce   sync.Once
	repoFacts  *facts
	factsError error
)

func repo(t *testing.T) *facts {
	t.Helper()
	loadOnce.Do(func() { repoFacts, factsError = loadFacts(root) })
	if factsError != nil {
		t.Fatalf("reading the repository: %v", factsError)
	}
	return repoFacts
}

// pages are the README and every page under docs/, pending pages of other branches included.
func pages(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		out = append(out, filepath.ToSlash(strings.TrimPrefix(d, root+string(filepath.Separator))))
	}
	return out
}

func TestDocsNameWhatExists(t *testing.T) {
	f := repo(t)
	ps := pages(t)
	if len(ps) < 10 {
		t.Fatalf("found only %v: the docs moved?", ps)
	}
	for _, p := range ps {
		t.Run(p, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(root, p))
			if err != nil {
				t.Fatal(err)
			}
			c := &checker{f: f, file: p}
			c.check(string(b))
			for _, pr := range c.problems {
				t.Error(pr)
			}
		})
	}
}

// TestReadmeMapsEveryPage keeps the README's map complete: a page no one links to is lost.
func TestReadmeMapsEveryPage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages(t)[1:] {
		if strings.HasPrefix(filepath.Base(p), "pending-") {
			continue // folded into the pages at merge
		}
		if !strings.Contains(string(b), "]("+p+")") {
			t.Errorf("README.md does not link %s", p)
		}
	}
}

// TestCheckerFindsBrokenDocs shows each check failing on a page naming something that does
// not exist, and staying quiet on the same sentence naming what does.
func TestCheckerFindsBrokenDocs(t *testing.T) {
	f := repo(t)
	for _, tc := range []struct {
		name, good, bad, want string
	}{
		{"make target", "Run `make test`.", "Run `make tests`.", `make target "tests"`},
		{"make target in a block", "```sh\nsudo make dev BMO=1\n```", "```sh\nsudo make devel BMO=1\n```", `make target "devel"`},
		{"make variable", "```sh\nmake deploy IMG=x\n```", "```sh\nmake deploy IMAGE=x\n```", "make variable IMAGE"},
		{"manager flag", "Set `--nodeslice-release-grace` (2m).", "Set `--nodeslice-release-grase` (2m).", "flag --nodeslice-release-grase"},
		{"plugin install flag", "from `--host-state-dir`", "from `--host-state-directory`", "flag --host-state-directory"},
		{"zap flag", "`--zap-log-level=debug`", "`--zap-level=debug`", "flag --zap-level"},
		{"file", "see `config/prometheus/alerts.yaml`", "see `config/prometheus/alert.yaml`", "path config/prometheus/alert.yaml"},
		{"directory with a placeholder", "`playbooks/providers/<os>/`", "`playbooks/provider/<os>/`", "path playbooks/provider/<os>/"},
		{"placeholder matching nothing", "`internal/switchdriver/ansible/testdata/cli/<os>.txt`", "`internal/switchdriver/ansible/testdata/cli/<os>.json`", "path internal/switchdriver/ansible/testdata/cli/<os>.json"},
		{"script", "```sh\nhack/switch-lab.sh\n```", "```sh\nhack/switch-labs.sh\n```", "path hack/switch-labs.sh"},
		{"kubectl kind", "```console\n$ kubectl get switches,switchports\n```", "```console\n$ kubectl get switches,switchport-configs\n```", `kubectl resource "switchport-configs"`},
		{"kubectl short name and group", "`kubectl get m3ipp` or `kubectl get ipaddresses.ipam.metal3.io`", "`kubectl get ipaddresses.ipam.metal4.io`", `kubectl resource "ipaddresses.ipam.metal4.io"`},
		{"kubectl after a namespace flag", "```sh\nkubectl -n infra annotate switch leaf1 a=b\n```", "```sh\nkubectl -n infra annotate swich leaf1 a=b\n```", `kubectl resource "swich"`},
		{"kubectl built-in kind", "`kubectl delete virtualmachine vm-blue` and `kubectl get pods`", "`kubectl get podz`", `kubectl resource "podz"`},
		{"printed columns", "```console\n$ kubectl get ippools\nNAME      CLUSTER     STRATEGY     SIZE    USED   FREE    READY   AGE\npool-1    cluster-1   random       47      4      43      True    12s\n```",
			"```console\n$ kubectl get ippools\nNAME      CLUSTER     STRATEGY     SIZE    USED   AVAILABLE   READY   AGE\npool-1    cluster-1   random       47      4      43          True    12s\n```", "kubectl get ippools prints"},
		{"jsonpath field", "`kubectl get ipaddressclaims machine-1-eth0 -o jsonpath='{.status.addressRef.name}'`",
			"`kubectl get ipaddressclaims machine-1-eth0 -o jsonpath='{.status.addressRefs.name}'`", "field status.addressRefs.name: not in the CRD of ipaddressclaims"},
		{"custom-columns field", "```console\n$ kubectl get ipamclaims -o custom-columns=NAME:.metadata.name,IPS:.status.ips\n```",
			"```console\n$ kubectl get ipamclaims -o custom-columns=NAME:.metadata.name,IPS:.status.ip\n```", "field status.ip: not in the CRD of ipamclaims"},
		{"kubectl explain field", "```sh\nkubectl explain ippool.spec.pools\n```", "```sh\nkubectl explain ippool.spec.pool\n```", "field spec.pool: not in the CRD of ippool"},
		{"CRD field", "`status.indexes`", "`status.indexs`", "field status.indexs"},
		{"CRD field in a map", "`spec.ports.<name>.clean`", "`spec.ports.<name>.cleaning`", "field spec.ports.[].cleaning"},
		{"CRD field alternatives", "`status.allocations[]{nodeName, sliceRange}`", "`status.allocations[]{nodeName, slice}`", "field status.allocations.[].slice"},
		{"CRD field of a kind", "`BareMetalHost.spec.consumerRef`", "`HostLink.spec.consumerRef`", "field spec.consumerRef: not in the CRD of HostLink"},
		{"CRD field with an error", "`spec.configuration.name: Forbidden`", "`spec.configurations.name: Forbidden`", "field spec.configurations.name"},
		{"manifest field", "```yaml\nkind: Switch\nspec:\n  chassisMAC: aa:bb:cc:dd:ee:ff\n  ports:\n    rack2-eth1: {name: Ethernet1/1}\n```",
			"```yaml\nkind: Switch\nspec:\n  chassisMAC: aa:bb:cc:dd:ee:ff\n  ports:\n    rack2-eth1: {port: Ethernet1/1}\n```", "Switch field spec.ports.rack2-eth1.port: not in its CRD"},
		{"link", "[the guide](migrating-from-ip-address-manager.md)", "[the guide](migrating-from-ipam.md)", "link migrating-from-ipam.md"},
		{"anchor", "[back](migrating-from-ip-address-manager.md#going-back)", "[back](migrating-from-ip-address-manager.md#going-forth)", "no heading with anchor #going-forth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := &checker{f: f, file: "docs/example.md"}
			good.check(tc.good)
			if len(good.problems) > 0 {
				t.Errorf("a page naming what exists got %v", good.problems)
			}
			bad := &checker{f: f, file: "docs/example.md"}
			bad.check(tc.bad)
			if len(bad.problems) == 0 {
				t.Fatalf("a page naming %s passed", tc.bad)
			}
			if !strings.Contains(strings.Join(bad.problems, "\n"), tc.want) {
				t.Errorf("problems %v do not name %q", bad.problems, tc.want)
			}
		})
	}
}

// TestFieldsElsewhereAreElsewhere keeps the list of unchecked fields honest: each must really
// be missing from the repository's CRDs, or it belongs checked.
func TestFieldsElsewhereAreElsewhere(t *testing.T) {
	f := repo(t)
	for p, why := range fieldsElsewhere {
		c := &checker{f: f, file: "fieldsElsewhere"}
		m := fieldSpan.FindStringSubmatch(p)
		c.fieldOf(0, m[1], m[2])
		if len(c.problems) == 0 {
			t.Errorf("%s (%s) is in a CRD of the repository: take it off the list", p, why)
		}
	}
}
