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

package openflow

import (
	"net/netip"
	"testing"
)

// BenchmarkFlows renders the largest rule list the API allows (64 rules), each with the
// worst port ranges, as a switch run does for every port it configures.
func BenchmarkFlows(b *testing.B) {
	rules := make([]Rule, 64)
	for i := range rules {
		rules[i] = Rule{Protocol: "tcp", Src: netip.MustParsePrefix("10.0.0.0/8"), SrcPorts: PortRange{1, 65534}, DstPorts: PortRange{1000, 2000}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Flows(1, "p1", rules); err != nil {
			b.Fatal(err)
		}
	}
}
