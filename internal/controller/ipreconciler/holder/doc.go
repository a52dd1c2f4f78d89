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

// Package holder decides, from what the cluster records, whether the holder of an address in
// whereabouts' objects (an IPPool allocation or an OverlappingRangeIPReservation) is still
// there: the pod it names, that very pod (not one re-created under its name), on a Node
// that still exists. It reads whereabouts' names and offsets. It imports only the standard
// library: the manager's ip reconciler feeds it from its cache.
package holder
