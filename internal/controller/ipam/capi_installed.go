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

package ipam

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	capiipamv1beta2 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// capiEnabled tells whether the Cluster API half of IPAM runs in this manager.
var capiEnabled = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "rackwire_ipam_capi_enabled",
	Help: "1 when the Cluster API IPAM API (ipam.cluster.x-k8s.io/v1beta2) is served and its claims are reconciled, 0 when it is not installed.",
})

func init() { metrics.Registry.MustRegister(capiEnabled) }

// CAPIInstalled reports whether the apiserver serves the Cluster API IPAM kinds rackwire
// uses; a manager on a cluster without them serves Metal3 claims only.
func CAPIInstalled(m meta.RESTMapper) bool {
	gv := capiipamv1beta2.GroupVersion
	for _, kind := range []string{"IPAddressClaim", "IPAddress"} {
		if _, err := m.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version); err != nil {
			return false
		}
	}
	return true
}
