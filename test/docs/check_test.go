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
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// checker finds what a Markdown page names that the repository does not have.
type checker struct {
	f *facts
	// file is the page's path relative to the root; links are resolved from its directory.
	file     string
	problems []string
}

func (c *checker) problem(line int, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf("%s:%d: %s", c.file, line, fmt.Sprintf(format, args...)))
}

var (
	fence     = regexp.MustCompile("^\\s*```\\s*([a-z]*)")
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	flagToken = regexp.MustCompile(`^--([a-z0-9][a-z0-9-]*)(=.*)?$`)
	fieldSpan = regexp.MustCompile(`^(?:([A-Z][A-Za-z0-9]*)\.)?((?:spec|status)\b.*)$`)
)

// check reads a page: commands in sh and console blocks and in code spans, flags, paths,
// CRD fields and links.
func (c *checker) check(text string) {
	lines := strings.Split(text, "\n")
	var para []string
	paraStart := 0
	flush := func() {
		if len(para) > 0 {
			c.prose(paraStart, strings.Join(para, "\n"))
		}
		para = nil
	}
	inFence, lang := false, ""
	var cont string
	var got []string // the resources of the console block's last plain kubectl get
	var block []string
	blockStart := 0
	for i, line := range lines {
		n := i + 1
		if m := fence.FindStringSubmatch(line); m != nil {
			flush()
			if inFence && lang == "yaml" {
				c.manifest(blockStart, strings.Join(block, "\n"))
			}
			inFence, lang, block, blockStart = !inFence, m[1], nil, n+1
			continue
		}
		if inFence {
			block = append(block, line)
			switch lang {
			case "sh", "bash":
				l := strings.TrimSpace(line)
				if strings.HasSuffix(l, "\\") {
					cont += strings.TrimSuffix(l, "\\") + " "
					continue
				}
				c.command(n, cont+l)
				cont = ""
			case "console":
				if l, ok := strings.CutPrefix(strings.TrimSpace(line), "$ "); ok {
					c.command(n, l)
					got = getResources(l)
				} else if got != nil {
					c.header(n, got, line)
				}
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if len(para) == 0 {
			paraStart = n
		}
		para = append(para, line)
	}
	flush()
}

// prose checks the code spans and links of a paragraph starting at line start.
func (c *checker) prose(start int, text string) {
	for _, ix := range codeSpan.FindAllStringSubmatchIndex(text, -1) {
		line := start + strings.Count(text[:ix[0]], "\n")
		span := strings.Join(strings.Fields(text[ix[2]:ix[3]]), " ")
		switch {
		case c.command(line, span):
		case flagToken.MatchString(strings.Fields(span)[0]):
			name := flagToken.FindStringSubmatch(strings.Fields(span)[0])[1]
			if !c.f.flags[name] {
				c.problem(line, "flag --%s: no binary (%s) defines it", name, strings.Join(flagSources, ", "))
			}
		case fieldSpan.MatchString(span):
			c.field(line, span)
		default:
			c.path(line, span)
		}
	}
	for _, ix := range mdLink.FindAllStringSubmatchIndex(text, -1) {
		c.link(start+strings.Count(text[:ix[0]], "\n"), text[ix[2]:ix[3]])
	}
}

// command checks a command line if it is one the docs may name: make, kubectl, a script
// or binary of the repository. It reports whether it was one.
func (c *checker) command(line int, cmd string) bool {
	cmd = strings.TrimSpace(strings.SplitN(cmd, " #", 2)[0])
	words := shellWords(cmd)
	for len(words) > 0 && (words[0] == "sudo" || strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-")) {
		words = words[1:]
	}
	if len(words) == 0 {
		return false
	}
	switch {
	case words[0] == "make":
		c.make(line, words[1:])
	case words[0] == "kubectl":
		c.kubectl(line, words[1:])
	case strings.HasPrefix(words[0], "hack/") || strings.HasPrefix(words[0], ".ci/"):
		c.path(line, words[0])
	default:
		return false
	}
	return true
}

func (c *checker) make(line int, args []string) {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if name, _, ok := strings.Cut(a, "="); ok {
			if !c.f.makeVars[name] {
				c.problem(line, "make variable %s: the Makefile never uses it", name)
			}
			continue
		}
		if !c.f.targets[a] {
			c.problem(line, "make target %q: not in the Makefile", a)
		}
	}
}

// kubectlValueFlags take the next word as their value.
var kubectlValueFlags = map[string]bool{
	"-n": true, "--namespace": true, "-l": true, "--selector": true, "-o": true, "--output": true,
	"-p": true, "--patch": true, "--type": true, "-f": true, "--filename": true, "--kubeconfig": true,
	"--as": true, "--context": true, "--clusterrole": true, "--serviceaccount": true, "--replicas": true,
	"-c": true, "--container": true, "--field-selector": true, "--for": true, "--timeout": true,
}

// kubectlResourceVerbs take a resource (or a list, or type/name) as their first argument.
var kubectlResourceVerbs = map[string]bool{
	"get": true, "describe": true, "delete": true, "patch": true, "annotate": true, "label": true,
	"edit": true, "scale": true, "explain": true, "wait": true,
}

func (c *checker) kubectl(line int, args []string) {
	var pos []string
	output := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if v, ok := strings.CutPrefix(a, "-o"); ok && v != "" {
				output = strings.TrimPrefix(v, "=")
			}
			if kubectlValueFlags[a] && i+1 < len(args) {
				if a == "-o" || a == "--output" {
					output = args[i+1]
				}
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	if len(pos) == 0 {
		return
	}
	res := ""
	switch {
	case kubectlResourceVerbs[pos[0]] && len(pos) > 1:
		res = pos[1]
	case pos[0] == "auth" && len(pos) > 3 && pos[1] == "can-i":
		res = pos[3]
	default:
		return
	}
	for _, r := range strings.Split(res, ",") {
		kind, _, _ := strings.Cut(r, "/")
		if pos[0] == "explain" {
			var field string
			kind, field, _ = strings.Cut(kind, ".")
			if field != "" {
				c.fieldOf(line, kind, field)
			}
		}
		if kind == "" || strings.ContainsAny(kind, "<>") {
			continue
		}
		if !c.f.resources[strings.ToLower(kind)] {
			c.problem(line, "kubectl resource %q: no CRD of the repository or built-in kind has that name", kind)
			continue
		}
		for _, m := range outputField.FindAllString(output, -1) {
			c.fieldOf(line, kind, strings.TrimPrefix(m, "."))
		}
	}
}

// outputField finds the fields a jsonpath or custom-columns output reads from the object.
var outputField = regexp.MustCompile(`\.(spec|status)(\.[A-Za-z0-9_]+|\[[^\]]*\])*`)

// getResources are the resources of a kubectl get whose output is the default table, else nil.
func getResources(cmd string) []string {
	words := shellWords(strings.TrimSpace(strings.SplitN(cmd, " #", 2)[0]))
	if len(words) < 3 || words[0] != "kubectl" || words[1] != "get" {
		return nil
	}
	var res []string
	for i := 2; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-o" || w == "--output" || strings.HasPrefix(w, "-o") || strings.HasPrefix(w, "--output="):
			return nil
		case kubectlValueFlags[w]:
			i++
		case strings.HasPrefix(w, "-"):
		case res == nil:
			for _, r := range strings.Split(w, ",") {
				kind, _, _ := strings.Cut(r, "/")
				res = append(res, strings.ToLower(kind))
			}
		}
	}
	return res
}

// header checks a table header printed for a CRD against its printer columns: a column
// the docs show must be one kubectl prints, in its place.
func (c *checker) header(line int, resources []string, text string) {
	fields := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(text), -1)
	if fields[0] == "NAMESPACE" {
		fields = fields[1:]
	}
	if len(fields) == 0 || fields[0] != "NAME" {
		return
	}
	var want [][]string
	for _, r := range resources {
		want = append(want, c.f.columns[r]...)
	}
	if len(want) == 0 {
		return // a built-in kind: kubectl's own printer
	}
	for _, w := range want {
		if strings.Join(w, " | ") == strings.Join(fields, " | ") {
			return
		}
	}
	c.problem(line, "kubectl get %s prints %v, not %v", strings.Join(resources, ","), want, fields)
}

// topLevel reports whether a span's first path element is an entry of the repository's
// root, which is what makes it a repository path rather than a node's or a URL.
func (c *checker) topLevel(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	if first == "" || first == ".." || first == "bin" || strings.ContainsAny(first, "<>*") {
		return false // an absolute path is the node's; bin/ is what builds write
	}
	_, err := os.Stat(filepath.Join(c.f.root, first))
	return err == nil
}

var pathSpan = regexp.MustCompile(`^[A-Za-z0-9_.<>*-]+(/[A-Za-z0-9_.<>*-]*)+$`)

// path checks a span that names a file or directory of the repository; placeholders such
// as <os> match any name.
func (c *checker) path(line int, span string) {
	if !pathSpan.MatchString(span) || !c.topLevel(span) {
		return
	}
	glob := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(strings.TrimSuffix(span, "/"), "*")
	if m, _ := filepath.Glob(filepath.Join(c.f.root, glob)); len(m) == 0 {
		c.problem(line, "path %s: not in the repository", span)
	}
}

// link checks a relative link and its anchor.
func (c *checker) link(line int, target string) {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return
	}
	file, anchor, _ := strings.Cut(target, "#")
	dest := c.file
	if file != "" {
		dest = path.Join(path.Dir(c.file), file)
		if strings.HasPrefix(dest, "../") {
			return // outside the repository (the workspace's design guide)
		}
		if _, err := os.Stat(filepath.Join(c.f.root, dest)); err != nil {
			c.problem(line, "link %s: %s does not exist", target, dest)
			return
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return
	}
	b, err := os.ReadFile(filepath.Join(c.f.root, dest))
	if err != nil {
		c.problem(line, "link %s: %v", target, err)
		return
	}
	if !anchors(string(b))[anchor] {
		c.problem(line, "link %s: %s has no heading with anchor #%s", target, dest, anchor)
	}
}

// anchors are the ids GitHub gives a page's headings.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// shellWords splits a command line as sh would, quotes removed.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case r == '|' || r == ';' || r == '&':
			if in {
				out = append(out, cur.String())
			}
			return out // what follows is another command
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
