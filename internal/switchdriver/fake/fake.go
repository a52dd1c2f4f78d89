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

// Package fake is an in-memory switchdriver.Driver for tests: it records every call and can
// be told to fail, hang or drift.
package fake

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	networkv1alpha1 "github.com/rackwire/rackwire/api/network/v1alpha1"
	"github.com/rackwire/rackwire/internal/switchdriver"
)

// Call is one recorded driver call.
type Call struct {
	// Op is "apply" or "read".
	Op      string
	Changes []switchdriver.Change
	Ports   []string
	// Limit is the time the call was given (its context's deadline from its start); 0 without one.
	Limit time.Duration
}

// Switch is the fake of one switch: its ports' configuration and the calls it received.
type Switch struct {
	mu       sync.Mutex
	ports    map[string]*networkv1alpha1.SwitchPortConfigurationSpec
	calls    []Call
	failAll  error
	failPort map[string]error
	notSaved bool
	hang     chan struct{}
	stall    bool
	busy     bool
	overlap  bool
}

func limitOf(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return time.Until(d)
	}
	return 0
}

func newSwitch() *Switch {
	return &Switch{ports: map[string]*networkv1alpha1.SwitchPortConfigurationSpec{}, failPort: map[string]error{}}
}

// Apply records the call and applies every change that is not told to fail.
func (s *Switch) Apply(ctx context.Context, changes []switchdriver.Change) map[string]error {
	s.enter(Call{Op: "apply", Changes: changes, Limit: limitOf(ctx)})
	defer s.leave()
	out := make(map[string]error, len(changes))
	if err := s.wait(ctx, true); err != nil {
		for _, c := range changes {
			out[c.Port] = err
		}
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range changes {
		switch {
		case s.failAll != nil:
			out[c.Port] = s.failAll
		case s.failPort[c.Port] != nil:
			out[c.Port] = s.failPort[c.Port]
		default:
			if err := switchdriver.CheckChange(c); err != nil {
				out[c.Port] = err
				continue
			}
			s.ports[c.Port] = c.Config.DeepCopy()
			out[c.Port] = nil
			if s.notSaved {
				out[c.Port] = fmt.Errorf("%w: %% Authorization denied for command 'write memory'", switchdriver.ErrNotSaved)
			}
		}
	}
	return out
}

// Read records the call and returns the ports as the fake holds them.
func (s *Switch) Read(ctx context.Context, ports []string) (map[string]*networkv1alpha1.SwitchPortConfigurationSpec, error) {
	s.enter(Call{Op: "read", Ports: ports, Limit: limitOf(ctx)})
	defer s.leave()
	if err := s.wait(ctx, false); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAll != nil {
		return nil, s.failAll
	}
	out := make(map[string]*networkv1alpha1.SwitchPortConfigurationSpec, len(ports))
	for _, p := range ports {
		out[p] = s.ports[p].DeepCopy()
	}
	return out, nil
}

func (s *Switch) enter(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		s.overlap = true
	}
	s.busy = true
	s.calls = append(s.calls, c)
}

func (s *Switch) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
}

func (s *Switch) wait(ctx context.Context, apply bool) error {
	s.mu.Lock()
	h, stall := s.hang, s.stall
	s.mu.Unlock()
	if h == nil || (stall && !apply) {
		return nil
	}
	if stall {
		// A switch that finishes the run however long it takes, as one that keeps going
		// after the operator stopped waiting would.
		<-h
		return nil
	}
	select {
	case <-h:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("switch did not answer: %w", ctx.Err())
	}
}

// Fail makes every call fail with err; nil heals the switch.
func (s *Switch) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAll = err
}

// RefuseSave makes every change land on the ports and fail to be saved, as on a switch
// whose login may configure but not save; false heals it.
func (s *Switch) RefuseSave(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notSaved = refuse
}

// FailPort makes changes to one port fail with err; nil heals it.
func (s *Switch) FailPort(port string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failPort[port] = err
}

// Hang makes calls block until Release or their context ends.
func (s *Switch) Hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = make(chan struct{})
}

// Stall makes apply calls block until Release, whatever their context says, and then
// succeed; reads still answer.
func (s *Switch) Stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang, s.stall = make(chan struct{}), true
}

// Release ends Hang and Stall.
func (s *Switch) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hang != nil {
		close(s.hang)
		s.hang, s.stall = nil, false
	}
}

// Drift changes a port behind the operator's back, as a person at the console would.
func (s *Switch) Drift(port string, cfg *networkv1alpha1.SwitchPortConfigurationSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg == nil {
		delete(s.ports, port)
		return
	}
	s.ports[port] = cfg.DeepCopy()
}

// Port returns the configuration the fake holds for a port.
func (s *Switch) Port(port string) *networkv1alpha1.SwitchPortConfigurationSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ports[port].DeepCopy()
}

// Calls returns a copy of the calls received so far.
func (s *Switch) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// ApplyCalls returns the apply calls received so far.
func (s *Switch) ApplyCalls() []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Op == "apply" {
			out = append(out, c)
		}
	}
	return out
}

// Overlapped reports whether two calls ever ran on this switch at once.
func (s *Switch) Overlapped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overlap
}

// Registry hands out one fake Switch per AnsibleSwitch, created on first use.
type Registry struct {
	mu       sync.Mutex
	switches map[types.NamespacedName]*Switch
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{switches: map[types.NamespacedName]*Switch{}}
}

// Get returns the fake of the AnsibleSwitch namespace/name.
func (r *Registry) Get(namespace, name string) *Switch {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := types.NamespacedName{Namespace: namespace, Name: name}
	s, ok := r.switches[k]
	if !ok {
		s = newSwitch()
		r.switches[k] = s
	}
	return s
}

// Factory is the switchdriver.Factory that returns the registry's fakes.
func (r *Registry) Factory(a *networkv1alpha1.AnsibleSwitch, _ *corev1.Secret) (switchdriver.Driver, error) {
	return r.Get(a.Namespace, a.Name), nil
}
