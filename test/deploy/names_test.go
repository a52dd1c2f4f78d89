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

package deploy

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rackwire/rackwire/internal/controlplane"
)

var metricName = regexp.MustCompile(`rackwire_[a-z0-9_]+`)

// TestMonitoringNamesExist finds every rackwire metric the alerts and the dashboard query
// among the names the Go code defines, so a renamed metric cannot leave an alert that never
// fires or an empty panel.
func TestMonitoringNamesExist(t *testing.T) {
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`"(rackwire_[a-z0-9_]+)"`).FindAllStringSubmatch(string(data), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config/prometheus/alerts.yaml", "config/grafana/dashboard.json"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		used := metricName.FindAllString(string(data), -1)
		if len(used) == 0 {
			t.Errorf("%s queries no rackwire metric", f)
		}
		for _, name := range used {
			base := name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, suffix); ok && defined[b] {
					base = b
				}
			}
			if !defined[base] {
				t.Errorf("%s queries %s, which no metric of the manager defines", f, name)
			}
		}
	}
}
