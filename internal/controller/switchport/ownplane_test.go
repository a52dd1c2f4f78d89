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

package switchport_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/controlplane"
)

// ownControlPlane starts a control plane for one test, apart from the suite's: the tests
// that start and stop managers of their own (with other flags) run on it.
func ownControlPlane(t *testing.T) (*envtest.Environment, *rest.Config) {
	t.Helper()
	root, err := controlplane.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	env, err := controlplane.New(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env, cfg
}

// leafWithSecret is the namespace ns with a Switch "leaf" on an AnsibleSwitch at ip that logs
// in with the Secret "leaf", all named alike.
func leafWithSecret(ns, ip string) []client.Object {
	om := metav1.ObjectMeta{Namespace: ns, Name: "leaf"}
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: om, StringData: map[string]string{"username": "u", "password": "p"}},
		&networkv1alpha1.AnsibleSwitch{ObjectMeta: om, Spec: networkv1alpha1.AnsibleSwitchSpec{OS: "openvswitch", IP: ip, Port: 22,
			Bridge: "br0", InsecureIgnoreHostKey: true, CredentialsSecret: networkv1alpha1.SecretRef{Name: "leaf"}}},
		&networkv1alpha1.Switch{ObjectMeta: om, Spec: networkv1alpha1.SwitchSpec{
			Provider: networkv1alpha1.ProviderRef{Kind: "AnsibleSwitch", Name: "leaf"},
			Clean:    networkv1alpha1.CleanPolicy{ParkingVLAN: ptr.To(networkv1alpha1.VLANID(parking))}}},
	}
}
