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

package nodeslice

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// nodesWithoutSlice counts, per network, the Nodes on which the whereabouts binary fails for
// want of a slice.
var nodesWithoutSlice = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "rackwire_nodeslice_nodes_without_slice",
	Help: "Nodes that hold no slice of the network (the whereabouts CNI binary fails on them).",
}, []string{"network"})

func init() { metrics.Registry.MustRegister(nodesWithoutSlice) }
