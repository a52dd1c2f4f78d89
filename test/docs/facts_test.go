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

package docs_test

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"
)

// facts is what the repository defines, read from its sources: what a doc may name.
type facts struct {
	root string
	// targets and vars of the Makefile.
	targets, makeVars map[string]bool
	// flags of the manager, devenv and the CNI plugin's install, from their definitions.
	flags map[string]bool
	// resources are the names kubectl accepts for a kind: plural, singular, short names and
	// kind, bare and group-qualified.
	resources map[string]bool
	// schemas of every CRD in the repository (ours, external ones, the tests' stand-ins), by
	// lower-case kind.
	schemas map[string][]*apiextensionsv1.JSONSchemaProps
	// columns are the headers kubectl get prints for a CRD's resource names, per version.
	columns map[string][][]string
	// kinds are the lower-case kinds each CRD resource name stands for.
	kinds map[string][]string
}

// flagSources are the packages whose flag definitions the docs may name.
var flagSources = []string{"cmd/manager", "cmd/devenv", "cmd/cni"}

func loadFacts(root string) (*facts, error) {
	f := &facts{root: root, targets: map[string]bool{}, makeVars: map[string]bool{}, flags: map[string]bool{},
		resources: map[string]bool{}, schemas: map[string][]*apiextensionsv1.JSONSchemaProps{},
		columns: map[string][][]string{}, kinds: map[string][]string{}}
	if err := f.loadMakefile(); err != nil {
		return nil, err
	}
	if err := f.loadFlags(); err != nil {
		return nil, err
	}
	if err := f.loadCRDs(); err != nil {
		return nil, err
	}
	f.loadBuiltinKinds()
	return f, nil
}

var (
	makeTarget = regexp.MustCompile(`^([A-Za-z0-9_.-]+)\s*:([^=]|$)`)
	makeVarDef = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*[:?+]?=`)
	makeVarUse = regexp.MustCompile(`\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]`)
)

func (f *facts) loadMakefile() error {
	b, err := os.ReadFile(filepath.Join(f.root, "Makefile"))
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m := makeTarget.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, "\t") {
			f.targets[m[1]] = true
		}
		if m := makeVarDef.FindStringSubmatch(line); m != nil {
			f.makeVars[m[1]] = true
		}
		for _, m := range makeVarUse.FindAllStringSubmatch(line, -1) {
			f.makeVars[m[1]] = true
		}
	}
	return nil
}

// flagFuncs are the flag package's definers, with the position of the flag's name.
var flagFuncs = map[string]int{
	"Bool": 0, "String": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "Float64": 0, "Duration": 0, "Func": 0,
	"BoolVar": 1, "StringVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1, "Float64Var": 1,
	"DurationVar": 1, "Var": 1, "TextVar": 1, "BoolFunc": 0,
}

// loadFlags reads the flag definitions of the binaries (a call of a flag definer with a
// literal name), and zap's flags where a binary binds them.
func (f *facts) loadFlags() error {
	for _, dir := range flagSources {
		files, err := filepath.Glob(filepath.Join(f.root, dir, "*.go"))
		if err != nil {
			return err
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if sel.Sel.Name == "BindFlags" {
					fs := flag.NewFlagSet("zap", flag.ContinueOnError)
					(&zap.Options{}).BindFlags(fs)
					fs.VisitAll(func(fl *flag.Flag) { f.flags[fl.Name] = true })
					return true
				}
				at, ok := flagFuncs[sel.Sel.Name]
				if !ok || len(call.Args) <= at {
					return true
				}
				if lit, ok := call.Args[at].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if name, err := strconv.Unquote(lit.Value); err == nil {
						f.flags[name] = true
					}
				}
				return true
			})
		}
	}
	return nil
}

func (f *facts) loadCRDs() error {
	return filepath.WalkDir(f.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != f.root && (n == "bin" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
			if !strings.Contains(doc, "kind: CustomResourceDefinition") {
				continue
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal([]byte(doc), crd); err != nil || crd.Kind != "CustomResourceDefinition" || crd.Spec.Names.Kind == "" {
				continue // a kustomize patch or a fragment, not a CRD
			}
			f.addCRD(crd)
		}
		return nil
	})
}

func (f *facts) addCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	n, g := crd.Spec.Names, crd.Spec.Group
	names := append([]string{n.Plural, n.Singular, strings.ToLower(n.Kind)}, n.ShortNames...)
	for _, name := range names {
		f.resources[name] = true
		f.resources[name+"."+g] = true
		f.kinds[name] = append(f.kinds[name], strings.ToLower(n.Kind))
		f.kinds[name+"."+g] = append(f.kinds[name+"."+g], strings.ToLower(n.Kind))
	}
	for i := range crd.Spec.Versions {
		cols := printedColumns(&crd.Spec.Versions[i])
		for _, name := range names {
			f.columns[name] = append(f.columns[name], cols)
			f.columns[name+"."+g] = append(f.columns[name+"."+g], cols)
		}
		if s := crd.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			k := strings.ToLower(n.Kind)
			f.schemas[k] = append(f.schemas[k], s.OpenAPIV3Schema)
		}
	}
}

// printedColumns is the header kubectl get prints for a CRD version: NAME, then its printer
// columns of priority 0, or AGE when it declares none.
func printedColumns(v *apiextensionsv1.CustomResourceDefinitionVersion) []string {
	cols := []string{"NAME"}
	if len(v.AdditionalPrinterColumns) == 0 {
		return append(cols, "AGE")
	}
	for _, c := range v.AdditionalPrinterColumns {
		if c.Priority == 0 {
			cols = append(cols, strings.ToUpper(c.Name))
		}
	}
	return cols
}

// loadBuiltinKinds adds the kinds client-go knows, as kubectl names them.
func (f *facts) loadBuiltinKinds() {
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") || gvk.Version == "__internal" {
			continue
		}
		plural, singular := meta.UnsafeGuessKindToResource(gvk)
		for _, name := range []string{plural.Resource, singular.Resource} {
			f.resources[name] = true
			if gvk.Group != "" {
				f.resources[name+"."+gvk.Group] = true
			}
		}
	}
	f.resources["customresourcedefinitions"], f.resources["crds"], f.resources["crd"] = true, true, true
}
