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

package switchport

import (
	"errors"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// LabelSwitchName and LabelSwitchNamespace name the Switch of a SwitchPort. Owner
	// references cannot cross namespaces, so these labels are how a port in a tenant
	// namespace finds its Switch and how the Switch finds its ports.
	LabelSwitchName = "metal3.io/switch-name"
	// LabelSwitchNamespace is the namespace of the port's Switch.
	LabelSwitchNamespace = "metal3.io/switch-namespace"
	// Finalizer holds a SwitchPort until its configuration is off the switch.
	Finalizer = "metal3.io/switchport"
)

var (
	errSuperseded = errors.New("superseded by a newer change to the same port in the same run")
	errNoAnswer   = errors.New("the driver returned no result for the port")
)

// SwitchOf returns the Switch a SwitchPort belongs to, from its labels.
func SwitchOf(o client.Object) (types.NamespacedName, bool) {
	l := o.GetLabels()
	name := l[LabelSwitchName]
	if name == "" {
		return types.NamespacedName{}, false
	}
	ns := l[LabelSwitchNamespace]
	if ns == "" {
		ns = o.GetNamespace()
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}
