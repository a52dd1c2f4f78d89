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

package devenv

import (
	"bytes"
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// A write the apiserver answers with a warning (here: a deprecated API version) shows the warning in devenv's own log, as one line, instead of going to controller-runtime's
// unset global logger, which prints a stack trace in `make dev`.
func TestClientWritesAPIWarningsToTheLog(t *testing.T) {
	env := &envtest.Environment{CRDs: []*apiextensionsv1.CustomResourceDefinition{deprecatedCRD()}}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	var log bytes.Buffer
	c, err := newClient(cfg, &log)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("devenv.rackwire.test/v1")
	obj.SetKind("Gadget")
	obj.SetName("warned")
	obj.SetNamespace("default")
	if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldOwner)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "apiserver warning: ") || !strings.Contains(lines[0], "deprecated") {
		t.Fatalf("want one apiserver warning line about the deprecation in the log, got %q", log.String())
	}
}

// deprecatedCRD serves devenv.rackwire.test/v1 Gadget, a version marked deprecated: every
// request to it carries a warning.
func deprecatedCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.devenv.rackwire.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "devenv.rackwire.test",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true, Deprecated: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}
