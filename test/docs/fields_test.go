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
	"fmt"
	"regexp"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// fieldsElsewhere are fields (and what lies below them) that the docs name on kinds whose
// CRD the repository does not carry, each with why; they are not checked.
var fieldsElsewhere = map[string]string{
	"spec.template.metadata.annotations": "CAPM3's Metal3MachineTemplate (no CRD here)",
	"spec.networkInterfaces":             "newer BMO releases' BareMetalHost (served by internal/controller/hostlink's suite, built in Go)",
	"BareMetalHost.spec.ports[]":         "the seed's proposal, which the docs say does not exist upstream",
}

// field checks a span naming a field path: spec.a.b, status.x[].y{p, q|r}, Kind.spec.z,
// or a field path followed by an error's type (spec.x: Forbidden).
func (c *checker) field(line int, span string) {
	span, _, _ = strings.Cut(span, ": ")
	for p := range fieldsElsewhere {
		if span == p || strings.HasPrefix(span, p+".") || strings.HasPrefix(span, p+"[") {
			return
		}
	}
	m := fieldSpan.FindStringSubmatch(span)
	c.fieldOf(line, m[1], m[2])
}

// fieldOf checks a path on the kind named (any kind when none): every alternative the path
// spells out must exist in that kind's schema.
func (c *checker) fieldOf(line int, kind, p string) {
	var kinds [][]*apiextensionsv1.JSONSchemaProps
	if kind != "" {
		k := strings.ToLower(kind)
		if s, ok := c.f.schemas[k]; ok {
			kinds = append(kinds, s)
		}
		for _, name := range c.f.kinds[k] {
			kinds = append(kinds, c.f.schemas[name])
		}
		if len(kinds) == 0 {
			if !c.f.resources[k] {
				c.problem(line, "field %s.%s: no CRD of kind %s", kind, p, kind)
			}
			return // a built-in kind: kubectl knows its fields
		}
	} else {
		for _, s := range c.f.schemas {
			kinds = append(kinds, s)
		}
	}
	for _, segs := range expandPath(p) {
		found := false
		for _, versions := range kinds {
			for _, s := range versions {
				if hasPath(s, segs, kind != "") {
					found = true
				}
			}
		}
		if !found {
			where := "any CRD of the repository"
			if kind != "" {
				where = "the CRD of " + kind
			}
			c.problem(line, "field %s: not in %s", strings.Join(segs, "."), where)
		}
	}
}

// expandPath spells out every path a field span names: "[]" and "[...]" step into list
// items or map values, "<name>" is any map key, "{a, b|c}" lists sub-paths.
func expandPath(p string) [][]string {
	var out [][]string
	var walk func(prefix []string, s string)
	walk = func(prefix []string, s string) {
		cur := append([]string(nil), prefix...)
		for len(s) > 0 {
			switch s[0] {
			case '.':
				s = s[1:]
			case '[':
				end := strings.IndexByte(s, ']')
				if end < 0 {
					end = len(s) - 1
				}
				cur, s = append(cur, "[]"), s[end+1:]
			case '{':
				depth, end := 0, 0
				for i, r := range s {
					if r == '{' {
						depth++
					} else if r == '}' {
						depth--
						if depth == 0 {
							end = i
							break
						}
					}
				}
				for _, alt := range splitTop(s[1:end]) {
					walk(cur, strings.TrimSpace(alt))
				}
				return
			default:
				end := strings.IndexAny(s, ".[{")
				if end < 0 {
					end = len(s)
				}
				seg := strings.TrimSpace(s[:end])
				if strings.HasPrefix(seg, "<") {
					seg = "[]"
				}
				cur, s = append(cur, seg), s[end:]
			}
		}
		out = append(out, cur)
	}
	walk(nil, p)
	return out
}

// splitTop splits at the commas and bars outside braces.
func splitTop(s string) []string {
	var out []string
	depth, last := 0, 0
	for i, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
		case ',', '|':
			if depth == 0 {
				out = append(out, s[last:i])
				last = i + 1
			}
		}
	}
	return append(out, s[last:])
}

// hasPath walks a schema. For a kind the text names, a schema that keeps unknown fields
// accepts whatever is below it; a field named without its kind must be spelled out in some
// schema, or a schema-less CRD (the stand-in Metal3Machine) would accept every typo.
func hasPath(s *apiextensionsv1.JSONSchemaProps, segs []string, lenient bool) bool {
	for _, seg := range segs {
		if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields && len(s.Properties) == 0 {
			return lenient
		}
		switch {
		case seg == "[]" && s.Items != nil && s.Items.Schema != nil:
			s = s.Items.Schema
		case seg == "[]" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s = s.AdditionalProperties.Schema
		default:
			next, ok := s.Properties[seg]
			if !ok {
				return false
			}
			s = &next
		}
	}
	return true
}

// manifest checks a YAML block: every field of an object whose kind has a CRD here must be
// in that CRD's schema (metadata aside).
func (c *checker) manifest(line int, text string) {
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			c.problem(line, "YAML block: %v", err)
			continue
		}
		kind, _ := obj["kind"].(string)
		versions := c.f.schemas[strings.ToLower(kind)]
		if len(versions) == 0 {
			continue
		}
		delete(obj, "metadata")
		var best []string
		for i, s := range versions {
			var unknown []string
			unknownFields(s, obj, "", &unknown)
			if i == 0 || len(unknown) < len(best) {
				best = unknown
			}
		}
		for _, u := range best {
			c.problem(line, "%s field %s: not in its CRD", kind, u)
		}
	}
}

// unknownFields lists the keys of v that schema s does not have.
func unknownFields(s *apiextensionsv1.JSONSchemaProps, v any, at string, out *[]string) {
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields && len(s.Properties) == 0 {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for k, val := range v {
			if p, ok := s.Properties[k]; ok {
				unknownFields(&p, val, at+"."+k, out)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				unknownFields(s.AdditionalProperties.Schema, val, at+"."+k, out)
			} else if at != "" || (k != "apiVersion" && k != "kind") {
				*out = append(*out, strings.TrimPrefix(at+"."+k, "."))
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for i, item := range v {
				unknownFields(s.Items.Schema, item, fmt.Sprintf("%s[%d]", at, i), out)
			}
		}
	}
}
