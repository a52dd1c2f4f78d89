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

package main

import (
	"flag"
	"os"
	"testing"

	"github.com/rackwire/rackwire/internal/controller/ipreconciler"
)

// A pod's network-status is anyone's who may update the pod: the reconciler reaps on its
// word only when the infra team says so (--ip-reconciler-trust-network-status), never by
// default.
func TestTrustNetworkStatusFlag(t *testing.T) {
	args, set, trust := os.Args, flag.CommandLine, ipreconciler.TrustNetworkStatus
	t.Cleanup(func() { os.Args, flag.CommandLine, ipreconciler.TrustNetworkStatus = args, set, trust })
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"manager"}, false},
		{[]string{"manager", "--ip-reconciler-trust-network-status"}, true},
	} {
		// parseFlags defines its flags on flag.CommandLine: a fresh set for each parse.
		flag.CommandLine = flag.NewFlagSet("manager", flag.ContinueOnError)
		os.Args = c.args
		parseFlags()
		if ipreconciler.TrustNetworkStatus != c.want {
			t.Errorf("%v: the reconciler trusts network-status: %v, want %v", c.args[1:], ipreconciler.TrustNetworkStatus, c.want)
		}
	}
}
