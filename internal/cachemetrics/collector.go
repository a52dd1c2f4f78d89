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

// Package cachemetrics is a Prometheus collector that counts objects of a manager's cache
// when it is scraped, so a series lives exactly as long as what it counts.
package cachemetrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CollectFunc lists what it counts from the cache and sends its metrics.
type CollectFunc func(ctx context.Context, cache client.Reader, ch chan<- prometheus.Metric) error

// Collector is one area's collector. It is registered once per process and pointed at the
// cache of the manager last set up (a test process sets up several); before that it
// reports nothing.
type Collector struct {
	descs   []*prometheus.Desc
	collect CollectFunc
	mu      sync.Mutex
	cache   client.Reader
}

// New returns a collector of descs, filled by collect.
func New(collect CollectFunc, descs ...*prometheus.Desc) *Collector {
	return &Collector{descs: descs, collect: collect}
}

// Use points the collector at a manager's cache.
func (c *Collector) Use(cache client.Reader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cache = cache
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	cache := c.cache
	c.mu.Unlock()
	if cache == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.collect(ctx, cache, ch); err != nil {
		ctrl.Log.WithName("metrics").Error(err, "collecting metrics from the cache")
	}
}
