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
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	nodeslicev1alpha1 "github.com/rackwire/rackwire/api/nodeslice/v1alpha1"
)

// nodesWithoutSlice counts, per network, the Nodes on which the whereabouts binary fails for
// want of a slice.
var nodesWithoutSlice = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "rackwire_nodeslice_nodes_without_slice",
	Help: "Nodes that hold no slice of the network (the whereabouts CNI binary fails on them).",
}, []string{"network"})

var (
	slicesDesc = prometheus.NewDesc("rackwire_nodeslice_slices",
		"Slices of the network's NodeSlicePool by state: assigned (to a Node) or free (may be handed out).",
		[]string{"network", "state"}, nil)

	// sliceMetrics is the one collector of the process, pointed at the cache of the manager
	// last set up (a test process sets up several).
	sliceMetrics = &sliceCollector{}
)

func init() { metrics.Registry.MustRegister(nodesWithoutSlice, sliceMetrics) }

// sliceCollector reads the NodeSlicePools from the cache when Prometheus scrapes: they are
// whereabouts' objects, and a pool another controller wrote counts the same.
type sliceCollector struct {
	mu        sync.Mutex
	cache     client.Reader
	namespace string
}

func (c *sliceCollector) use(cache client.Reader, namespace string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cache, c.namespace = cache, namespace
}

func (c *sliceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- slicesDesc }

func (c *sliceCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	cache, namespace := c.cache, c.namespace
	c.mu.Unlock()
	if cache == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var pools nodeslicev1alpha1.NodeSlicePoolList
	if err := cache.List(ctx, &pools, client.InNamespace(namespace)); err != nil {
		ctrl.Log.WithName("metrics").Error(err, "listing NodeSlicePools")
		return
	}
	for i := range pools.Items {
		p := &pools.Items[i]
		assigned, free := 0, 0
		for _, a := range p.Status.Allocations {
			if a.NodeName != "" {
				assigned++
			} else {
				free++
			}
		}
		// Past 8192 slices only the assigned ones are listed; freeSlices counts the rest.
		if p.Status.FreeSlices != nil {
			free = int(*p.Status.FreeSlices)
		}
		ch <- prometheus.MustNewConstMetric(slicesDesc, prometheus.GaugeValue, float64(assigned), p.Name, "assigned")
		ch <- prometheus.MustNewConstMetric(slicesDesc, prometheus.GaugeValue, float64(free), p.Name, "free")
	}
}
