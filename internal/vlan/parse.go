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

package vlan

import (
	"strconv"
	"strings"
)

// ParseError names the item of a range list that is wrong.
type ParseError struct {
	Input  string // the whole list
	Item   int    // 1-based position of the item in the list
	Token  string // the item, trimmed
	Reason string
}

func (e *ParseError) Error() string {
	return "VLAN list " + strconv.Quote(e.Input) + ": item " + strconv.Itoa(e.Item) + " " +
		strconv.Quote(e.Token) + ": " + e.Reason
}

// Parse reads the seeds' range syntax: comma-separated ids and inclusive ranges, such as
// "1, 6-10" or "2-10". Spaces around items and around the dash are ignored; items may
// overlap and come in any order. An empty (or blank) string is the empty set; an empty
// item ("1,,2" or a trailing comma) is an error, as it usually hides a typo.
func Parse(s string) (Set, error) {
	var set Set
	if strings.TrimSpace(s) == "" {
		return set, nil
	}
	for i, item := range strings.Split(s, ",") {
		tok := strings.TrimSpace(item)
		fail := func(reason string) (Set, error) {
			return Set{}, &ParseError{Input: s, Item: i + 1, Token: tok, Reason: reason}
		}
		if tok == "" {
			return fail("empty item")
		}
		first, last, isRange := strings.Cut(tok, "-")
		lo, reason := parseID(strings.TrimSpace(first))
		if reason != "" {
			return fail(reason)
		}
		hi := lo
		if isRange {
			if hi, reason = parseID(strings.TrimSpace(last)); reason != "" {
				return fail(reason)
			}
			if lo > hi {
				return fail("range runs backwards")
			}
		}
		set.addRange(lo, hi)
	}
	return set, nil
}

// MustParse is Parse for constants; it panics on error.
func MustParse(s string) Set {
	set, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return set
}

// parseID returns the id or why it is not one.
func parseID(s string) (int, string) {
	if s == "" {
		return 0, "missing VLAN id"
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, strconv.Quote(s) + " is not a VLAN id"
		}
	}
	id, err := strconv.Atoi(s)
	if err != nil || !Valid(id) {
		return 0, "VLAN id " + s + " is out of range 1-4094"
	}
	return id, ""
}
