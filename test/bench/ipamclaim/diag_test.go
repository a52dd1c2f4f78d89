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

package ipamclaim

import (
	"context"
	"fmt"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The figures below say where a burst's time goes: what the apiserver served (every client:
// the harness's VM creates, the manager's writes, the webhooks' reads), how long keys waited
// in the controllers' queues, and how long a reconcile took.

// apiserverRequests reads apiserver_request_total by verb, resource, subresource and code,
// watches left out.
func apiserverRequests(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	f := fams["apiserver_request_total"]
	if f == nil {
		return out, nil
	}
	for _, m := range f.GetMetric() {
		l := labels(m)
		switch l["verb"] {
		case "WATCH", "CONNECT":
			continue
		}
		res := l["resource"]
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		out[fmt.Sprintf("%-6s %-40s %s", l["verb"], res, l["code"])] += m.GetCounter().GetValue()
	}
	return out, nil
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// printRequests prints the apiserver's requests of the burst but watches, per VM: a read
// here is a read past a cache.
func printRequests(before, after map[string]float64, n int) {
	keys := make([]string, 0, len(after))
	for k := range after {
		if after[k]-before[k] > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Printf("  apiserver requests: %s %6.2f per VM\n", k, (after[k]-before[k])/float64(n))
	}
}

// queueFigures reads the manager's workqueue histograms: mean wait in the queue and mean
// reconcile, per controller, as sum and count so that a window can be taken.
type queueFigures map[string][4]float64 // controller -> wait sum, wait count, work sum, work count

func readQueues() (queueFigures, error) {
	fams, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	out := queueFigures{}
	for _, f := range fams {
		idx := -1
		switch f.GetName() {
		case "workqueue_queue_duration_seconds":
			idx = 0
		case "workqueue_work_duration_seconds":
			idx = 2
		}
		if idx < 0 {
			continue
		}
		for _, m := range f.GetMetric() {
			name := labels(m)["name"]
			v := out[name]
			v[idx] += m.GetHistogram().GetSampleSum()
			v[idx+1] += float64(m.GetHistogram().GetSampleCount())
			out[name] = v
		}
	}
	return out, nil
}

func printQueues(before, after queueFigures) {
	names := make([]string, 0, len(after))
	for k := range after {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		a, b := after[k], before[k]
		waits, works := a[1]-b[1], a[3]-b[3]
		if waits == 0 && works == 0 {
			continue
		}
		fmt.Printf("  queue %-16s %6.0f reconciles, mean wait %7.1f ms, mean reconcile %7.1f ms\n", k, works,
			1000*(a[0]-b[0])/max(waits, 1), 1000*(a[2]-b[2])/max(works, 1))
	}
}
