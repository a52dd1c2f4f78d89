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

package crd

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/discovery"
)

var _ = Describe("the ipam.metal3.io resources", func() {
	It("answer to ip-address-manager's short names and categories (kubectl get m3ipp)", func() {
		d, err := discovery.NewDiscoveryClientForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		list, err := d.ServerResourcesForGroupVersion("ipam.metal3.io/v1alpha1")
		Expect(err).NotTo(HaveOccurred())
		byName := map[string][]string{}
		categories := map[string][]string{}
		for _, r := range list.APIResources {
			byName[r.Name], categories[r.Name] = r.ShortNames, r.Categories
		}
		Expect(byName["ippools"]).To(ContainElements("ipp", "ippool", "m3ipp", "m3ippool", "m3ippools", "metal3ipp", "metal3ippool", "metal3ippools"))
		Expect(byName["ipclaims"]).To(ContainElements("ipc", "ipclaim", "m3ipc", "m3ipclaim", "m3ipclaims", "metal3ipc", "metal3ipclaim", "metal3ipclaims"))
		Expect(byName["ipaddresses"]).To(ContainElements("ipa", "ipaddress", "m3ipa", "m3ipaddress", "m3ipaddresses",
			"metal3ipa", "metal3ipaddress", "metal3ipaddresses"))
		Expect(categories["ippools"]).To(ContainElement("cluster-api"))
		Expect(categories["ipclaims"]).To(ContainElement("cluster-api"))
		Expect(categories["ipaddresses"]).To(ContainElement("metal3"))
	})
})
