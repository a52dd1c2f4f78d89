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

package ipalloc

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinels for errors.Is. The returned errors wrap them with the address concerned.
var (
	// ErrNotInPool: the address is not one the pool may hand out (outside every entry,
	// or excluded: gateway, network, broadcast, excludedAddresses).
	ErrNotInPool = errors.New("address not in pool")
	// ErrInUse: Reserve of an address that is already used.
	ErrInUse = errors.New("address already in use")
	// ErrNotInUse: Release of an address that is free.
	ErrNotInUse = errors.New("address not in use")
	// ErrExhausted: Allocate on a pool without a free address.
	ErrExhausted = errors.New("pool exhausted")
)

// FieldError is a problem with one field of a pool definition. Field is a path relative
// to the pool spec in the Metal3 spelling ("pools[2].end", "excludedAddresses[0]",
// "gateway") so a webhook can prefix it with "spec" and report it as a field error.
type FieldError struct {
	Field  string
	Value  string // the offending value as written; empty when the field is missing
	Detail string
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Detail
	}
	return e.Field + ": " + strconv.Quote(e.Value) + ": " + e.Detail
}

// FieldErrors is every problem found in a pool definition, in field order. It unwraps to
// its elements, so errors.As(err, &fe) finds the first one.
type FieldErrors []*FieldError

func (es FieldErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

func (es FieldErrors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// orNil keeps callers from returning a non-nil error interface holding an empty list.
func (es FieldErrors) orNil() error {
	if len(es) == 0 {
		return nil
	}
	return es
}
