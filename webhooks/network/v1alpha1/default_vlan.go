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

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/rackwire/rackwire/internal/vlan"
)

// defaultVLAN is the VLAN every supported network OS leaves its ports in: each port rackwire
// does not manage is an untagged member of it, so whatever rackwire put on it would share a
// broadcast domain with all of them (and junos refuses an object for it).
const defaultVLAN = 1

const defaultVLANMessage = "VLAN 1 is the switches' default VLAN, of which every port rackwire does not manage is an untagged member; it cannot be isolated, so rackwire never gives it out"

// notDefaultVLAN refuses a VLAN list holding the default VLAN.
func notDefaultVLAN(path *field.Path, value any, s vlan.Set) field.ErrorList {
	if !s.Contains(defaultVLAN) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, value, defaultVLANMessage)}
}
