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

package controlplane

import (
	"bufio"
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

var requestLine = regexp.MustCompile(`^apiserver_request_total\{(.*)\} ([0-9.e+]+)$`)
var labelRe = regexp.MustCompile(`(\w+)="([^"]*)"`)

// Requests is the apiserver's apiserver_request_total by "VERB resource[/subresource]"
// (with " (409)" for conflicts): what benchmarks count a workload's requests with.
type Requests map[string]float64

// ReadRequests reads the apiserver's counters through rc (a client of a user allowed /metrics).
func ReadRequests(ctx context.Context, rc rest.Interface) (Requests, error) {
	out := Requests{}
	raw, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return out, err
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := requestLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		l := map[string]string{}
		for _, kv := range labelRe.FindAllStringSubmatch(m[1], -1) {
			l[kv[1]] = kv[2]
		}
		k := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			k += "/" + l["subresource"]
		}
		if l["code"] == "409" {
			k += " (409)"
		}
		v, _ := strconv.ParseFloat(m[2], 64)
		out[k] += v
	}
	return out, nil
}

// Since is r minus an earlier snapshot.
func (r Requests) Since(before Requests) Requests {
	out := Requests{}
	for k, v := range r {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// Writes counts the mutating requests.
func (r Requests) Writes() float64 {
	n := 0.0
	for k, v := range r {
		switch strings.Fields(k)[0] {
		case "POST", "PATCH", "PUT", "DELETE", "APPLY":
			n += v
		}
	}
	return n
}

// Total counts every request.
func (r Requests) Total() float64 {
	n := 0.0
	for _, v := range r {
		n += v
	}
	return n
}
