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

// Package purity holds the rule that keeps the pure engines pure: internal/ipalloc and
// internal/vlan are shared by the controllers, the webhooks and the CNI binary, so they and
// their tests may import only the standard library and each other.
package purity

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/rackwire/rackwire/"

// The source is read with go/build rather than `go list` so that the test cache sees the
// files and reruns the test when an import is added.
var purePackages = []string{"internal/ipalloc", "internal/vlan", "internal/openflow", "internal/slicing", "internal/procstat", "internal/netcli", "internal/cniconf"}

func TestPurePackagesImportOnlyTheStandardLibrary(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var visit func(rel, via string)
	visit = func(rel, via string) {
		if seen[rel] {
			return
		}
		seen[rel] = true
		pkg, err := build.ImportDir(filepath.Join(root, rel), build.ImportComment)
		if err != nil {
			t.Fatalf("reading %s: %v", rel, err)
		}
		imports := append(append(append([]string{}, pkg.Imports...), pkg.TestImports...), pkg.XTestImports...)
		for _, imp := range imports {
			switch {
			case strings.HasPrefix(imp, module+"internal/"):
				visit(strings.TrimPrefix(imp, module), via)
			case strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
				t.Errorf("%s (checked for %s) imports %s: pure packages use only the standard library", rel, via, imp)
			case strings.HasPrefix(imp, module):
				t.Errorf("%s (checked for %s) imports %s", rel, via, imp)
			}
		}
	}
	for _, p := range purePackages {
		visit(p, p)
	}
}
