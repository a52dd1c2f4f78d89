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
	"errors"
	"fmt"
	"time"

	"github.com/rackwire/rackwire/internal/ipalloc"
)

// Condition reasons of claims of both kinds. The Cluster API contract names the failures
// AllocationFailed, PoolNotReady and PoolExhausted; Metal3 claims use the same words.
const (
	ReasonAllocated        = "Allocated"
	ReasonAllocationFailed = "AllocationFailed"
	ReasonPoolNotReady     = "PoolNotReady"
	ReasonPoolExhausted    = "PoolExhausted"
	// ReasonWaitingForCluster: the claim names a Cluster that does not exist.
	ReasonWaitingForCluster = "WaitingForCluster"
)

// How long a claim waits before it tries again by itself. Exhaustion and conflicts are
// also retried as soon as an address is freed or the pool changes; these are backstops.
const (
	retryPaused    = 10 * time.Second
	retryPool      = 10 * time.Second
	retryExhausted = 60 * time.Second
	retryRace      = 100 * time.Millisecond
)

// outcome is what one attempt to bind a claim came to; the status of the claim is
// computed from it in one place per kind.
type outcome struct {
	address string // name of the IPAddress when bound
	reason  string
	message string
	retry   time.Duration
	// transient: a state expected to pass by itself (a pool not created yet). Metal3 claims
	// then leave errorMessage unset, since CAPM3 copies it into Metal3Data as a failure.
	transient bool
}

// poolMissing is the outcome of a claim whose pool does not exist (yet): transient, since
// pools and claims are often applied together.
func poolMissing(name string) outcome {
	return outcome{reason: ReasonPoolNotReady, message: fmt.Sprintf("IPPool %s not found", name), retry: retryPool, transient: true}
}

func bound(name string) outcome { return outcome{address: name, reason: ReasonAllocated} }

// pickFailure turns a failed in-memory pick into the outcome a user sees.
func pickFailure(err error) outcome {
	switch {
	case errors.Is(err, ipalloc.ErrExhausted):
		return outcome{reason: ReasonPoolExhausted, message: "no free address left in the pool", retry: retryExhausted}
	case errors.Is(err, errPoolNotReady):
		return outcome{reason: ReasonPoolNotReady, message: err.Error(), retry: retryPool}
	default:
		return outcome{reason: ReasonAllocationFailed, message: err.Error(), retry: retryExhausted}
	}
}
