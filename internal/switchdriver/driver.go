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

// Package switchdriver is the contract between the SwitchPort state machine and whatever
// configures a real switch. It is batch-shaped because a switch run (an Ansible playbook)
// costs seconds whatever the number of ports it touches.
package switchdriver

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
)

// Change is the wanted configuration of one port. There is no "back to the default":
// cleaning is a Change to the port's clean state, because a device's default may carry
// every VLAN. A Config that names no VLAN is refused with ErrRefused.
type Change struct {
	Port   string
	Config *networkv1alpha1.SwitchPortConfigurationSpec
	// Parking is the Switch's parking VLAN for this port (0: unknown). A trunk without an
	// untagged VLAN takes it as native VLAN where the OS would otherwise put the port's
	// untagged frames on its default VLAN, shared by every such port.
	Parking int
}

// Driver configures the ports of one switch. Callers never run two calls on one Driver at
// once, so implementations need no locking of their own.
type Driver interface {
	// Apply makes every change in one run on the switch and returns the outcome per port
	// (a nil error is success). An error for the whole run is reported for every port.
	Apply(ctx context.Context, changes []Change) map[string]error
	// Read returns the current configuration of the named ports (nil for a clean port).
	// Read with no ports checks that the switch answers with the credentials.
	Read(ctx context.Context, ports []string) (map[string]*networkv1alpha1.SwitchPortConfigurationSpec, error)
}

// Factory builds the Driver of an AnsibleSwitch from its credentials.
type Factory func(*networkv1alpha1.AnsibleSwitch, *corev1.Secret) (Driver, error)

// ErrUnavailable means the manager has no driver for the provider: nothing is sent to the
// switch and no port may claim to be configured.
var ErrUnavailable = errors.New("no switch driver is configured in this manager")

// Errors that drivers wrap, so that conditions can name the cause instead of "failed".
var (
	// ErrCredentials: the credentials Secret lacks what the driver needs.
	ErrCredentials = errors.New("incomplete switch credentials")
	// ErrAuthentication: the switch refused the credentials.
	ErrAuthentication = errors.New("the switch refused the credentials")
	// ErrUnreachable: the switch could not be reached or did not answer the login.
	ErrUnreachable = errors.New("the switch is unreachable")
	// ErrTimeout: the run did not finish within its limit and was stopped.
	ErrTimeout = errors.New("the switch run timed out")
	// ErrUnsupported: the driver cannot do this on the switch's OS.
	ErrUnsupported = errors.New("not supported by the playbooks for this switch")
	// ErrRefused: the change would leave the port reaching more than it names.
	ErrRefused = errors.New("change refused")
	// ErrNotSaved: the switch runs the change, but saving its running configuration failed
	// (a login that may configure but not save): the port carries the change until a reboot.
	ErrNotSaved = errors.New("the switch runs the change but did not save it")
	// ErrNotStarted: the run never reached the switch (it waited out its limit for one of
	// the manager's playbook processes); it says nothing of the switch's health.
	ErrNotStarted = errors.New("the run never reached the switch")
)

// CheckChange refuses a change that names no VLAN: applied, it would leave the port on the
// device's default.
func CheckChange(c Change) error {
	if c.Config == nil || (c.Config.UntaggedVLAN == nil && c.Config.VLANs == "") {
		return fmt.Errorf("%w: port %s: a configuration must set untaggedVLAN or vlans; with neither the port would keep the switch's default, which may carry every VLAN", ErrRefused, c.Port)
	}
	return nil
}

// Unavailable is the Factory of a manager with no real driver. It refuses, instead of
// pretending, so ports stay in Configuring with reason DriverUnavailable.
func Unavailable(*networkv1alpha1.AnsibleSwitch, *corev1.Secret) (Driver, error) {
	return nil, ErrUnavailable
}
