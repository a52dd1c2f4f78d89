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

package clusterctl

import (
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	if releaseBase != "" {
		_ = os.RemoveAll(releaseBase)
	}
	os.Exit(code)
}

func mustSemver(t *testing.T, v string) *utilversion.Version {
	t.Helper()
	sv, err := utilversion.ParseSemantic(v)
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

func sleep() { time.Sleep(100 * time.Millisecond) }
