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

package main

import (
	"os"
	"strings"
)

// noNamespace is not a namespace's name (names are DNS labels): a scope of it grants none.
const noNamespace = "-"

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// secretNamespaces resolves --switch-secret-namespaces: the namespaces listed, or the
// manager's own. Never empty: an empty scope would mean every namespace.
func secretNamespaces(flagValue string) []string {
	var out []string
	for _, ns := range strings.Split(flagValue, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	if len(out) > 0 {
		return out
	}
	own := os.Getenv("POD_NAMESPACE")
	if own == "" {
		if data, err := os.ReadFile(serviceAccountNamespace); err == nil {
			own = strings.TrimSpace(string(data))
		}
	}
	if own == "" {
		// Outside a pod (make run, the test harnesses) the manager's namespace is unknown:
		// grant none rather than stop, so a manager serving no switch runs, and a Switch says
		// CredentialsNotGranted, naming the flag.
		return []string{noNamespace}
	}
	return []string{own}
}
