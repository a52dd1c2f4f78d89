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

// Package scheme is the runtime scheme of every API group rackwire reads or writes: the
// built-in kinds, our own groups, the Cluster API IPAM contract served from our pools, and
// the NetworkAttachmentDefinitions node slices are read from, the IPAMClaims of persistent
// IPs and the KubeVirt VMs they are for.
// The manager, the local control plane and the tests share it so that none of them misses a
// group another one knows.
package scheme

import (
	ipamclaimsv1alpha1 "github.com/k8snetworkplumbingwg/ipamclaims/pkg/crd/ipamclaims/v1alpha1"
	nadv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	virtv1 "kubevirt.io/api/core/v1"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"

	ipamv1alpha1 "github.com/rackwire/rackwire/api/ipam/v1alpha1"
	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// New returns a scheme with every group registered.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(ipamv1alpha1.AddToScheme(s))
	utilruntime.Must(networkv1alpha1.AddToScheme(s))
	utilruntime.Must(capiipamv1beta2.AddToScheme(s))
	utilruntime.Must(metal3v1alpha1.AddToScheme(s))
	utilruntime.Must(nodeslicev1alpha1.AddToScheme(s))
	utilruntime.Must(nadv1.AddToScheme(s))
	utilruntime.Must(ipamclaimsv1alpha1.AddToScheme(s))
	utilruntime.Must(virtv1.AddToScheme(s))
	return s
}
