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

package promscrape

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const exposition = `# TYPE runs_total counter
runs_total{switch="a",result="ok"} 4
runs_total{switch="a",result="failed"} 1
# TYPE ready gauge
ready{switch="a"} 1
# TYPE duration_seconds histogram
duration_seconds_bucket{switch="a",le="1"} 2
duration_seconds_bucket{switch="a",le="+Inf"} 3
duration_seconds_sum{switch="a"} 2.5
duration_seconds_count{switch="a"} 3
`

func TestScrapeAndSample(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprint(w, exposition)
	}))
	defer srv.Close()
	fams, err := Scrape(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
		err    string
	}{
		{"runs_total", map[string]string{"result": "ok"}, 4, ""},
		{"runs_total", map[string]string{"switch": "a", "result": "failed"}, 1, ""},
		{"ready", nil, 1, ""},
		{"duration_seconds", map[string]string{"switch": "a"}, 3, ""},
		{"runs_total", map[string]string{"switch": "a"}, 0, "2 series"},
		{"runs_total", map[string]string{"switch": "b"}, 0, "0 series"},
		{"missing", nil, 0, "no metric missing"},
	} {
		got, err := Sample(fams, tc.name, tc.labels)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s %v: error %v, want %q", tc.name, tc.labels, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s %v = %v %v, want %v", tc.name, tc.labels, got, err, tc.want)
		}
	}
}

func TestScrapeRefusesAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer srv.Close()
	if _, err := Scrape(srv.URL); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a 403 scrape: %v", err)
	}
}
