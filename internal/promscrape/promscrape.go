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

// Package promscrape reads a Prometheus text endpoint as Prometheus does and picks single
// series out of it: the tests that check the manager's metrics use it.
package promscrape

import (
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape reads the metric families url serves.
func Scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url) //nolint:noctx,gosec // loopback endpoints of tests, under their deadline
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// Sample is the value of the one series of name whose labels include labels: a gauge's or
// a counter's value, a histogram's count of observations. No such series, or more than
// one, is an error.
func Sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, error) {
	f, ok := families[name]
	if !ok {
		return 0, fmt.Errorf("no metric %s", name)
	}
	var found []float64
	for _, m := range f.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Histogram != nil:
			found = append(found, float64(m.GetHistogram().GetSampleCount()))
		case m.Counter != nil:
			found = append(found, m.GetCounter().GetValue())
		default:
			found = append(found, m.GetGauge().GetValue())
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("%d series of %s with %v, want one", len(found), name, labels)
	}
	return found[0], nil
}

func hasLabels(m *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}
