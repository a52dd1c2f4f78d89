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
	"fmt"
	"slices"
	"strings"
)

// parseServe reads --serve: a comma list of areas, each either a bare name (served) or
// name=true / name=false. The release components write the second form, one clusterctl
// variable per area, so that the same variable also gates the area's webhooks; only the
// exact words true and false are taken, because the webhooks' CEL conditions compare with
// 'true' and a manager serving an area whose webhooks are off (or the reverse) would let
// through what it should refuse. An area not listed is not served.
func parseServe(list string, known []string) (map[string]bool, error) {
	serve := map[string]bool{}
	seen := map[string]bool{}
	for entry := range strings.SplitSeq(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, value, hasValue := strings.Cut(entry, "=")
		if !slices.Contains(known, name) {
			return nil, fmt.Errorf("--serve: unknown area %q; the areas are %s", name, strings.Join(known, ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("--serve: area %q is named twice", name)
		}
		seen[name] = true
		on := true
		if hasValue {
			switch value {
			case "true":
			case "false":
				on = false
			default:
				return nil, fmt.Errorf("--serve: area %s=%q: the value must be true or false", name, value)
			}
		}
		serve[name] = on
	}
	if !slices.ContainsFunc(known, func(n string) bool { return serve[n] }) {
		return nil, fmt.Errorf("--serve %q serves no area; the areas are %s", list, strings.Join(known, ", "))
	}
	return serve, nil
}
