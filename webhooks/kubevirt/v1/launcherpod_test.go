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

package v1

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	virtv1 "kubevirt.io/api/core/v1"
)

func TestParseElements(t *testing.T) {
	cases := []struct {
		raw     string
		want    []map[string]any
		wantErr bool
	}{
		{`[{"name":"blue","namespace":"nets","interface":"pod1a2b","mac":"02:00:00:00:00:01","x-future":{"a":1}}]`,
			[]map[string]any{{"name": "blue", "namespace": "nets", "interface": "pod1a2b", "mac": "02:00:00:00:00:01", "x-future": map[string]any{"a": 1.0}}}, false},
		{`blue, nets/red@eth2 ,green@net3`,
			[]map[string]any{{"name": "blue"}, {"name": "red", "namespace": "nets", "interface": "eth2"}, {"name": "green", "interface": "net3"}}, false},
		{`[{"name":`, nil, true},
		{`nets/`, nil, true},
	}
	for _, c := range cases {
		got, err := parseElements(c.raw)
		if (err != nil) != c.wantErr {
			t.Errorf("parseElements(%q) error = %v, want error %v", c.raw, err, c.wantErr)
			continue
		}
		if !c.wantErr && !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseElements(%q) = %v, want %v", c.raw, got, c.want)
		}
	}
}

func TestVMINetwork(t *testing.T) {
	vmi := &virtv1.VirtualMachineInstance{}
	vmi.Namespace = "vms"
	vmi.Spec.Networks = []virtv1.Network{
		{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}},
		{Name: "primary", NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: "vms/main", Default: true}}},
		{Name: "blue", NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: "nets/blue"}}},
		{Name: "red", NetworkSource: virtv1.NetworkSource{Multus: &virtv1.MultusNetwork{NetworkName: "red"}}},
	}
	cases := []struct {
		nad  types.NamespacedName
		want string
		ok   bool
	}{
		{types.NamespacedName{Namespace: "nets", Name: "blue"}, "blue", true},
		{types.NamespacedName{Namespace: "vms", Name: "red"}, "red", true},
		{types.NamespacedName{Namespace: "nets", Name: "red"}, "", false},
		{types.NamespacedName{Namespace: "vms", Name: "main"}, "", false}, // the default network: no claim
	}
	for _, c := range cases {
		got, ok := vmiNetwork(vmi, c.nad)
		if got != c.want || ok != c.ok {
			t.Errorf("vmiNetwork(%s) = %q, %v; want %q, %v", c.nad, got, ok, c.want, c.ok)
		}
	}
}
