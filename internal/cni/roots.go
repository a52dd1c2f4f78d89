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

package cni

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The plugin runs as root on the node, and anyone who may create a NAD writes its
// configuration: the paths it names are confined to the directories the DaemonSet installs
// (config/cni/daemonset.yaml mounts each as DirectoryOrCreate). A path elsewhere fails the
// verb naming its key, before anything is read, created or appended to.
const (
	// StateRoot holds state_dir: the nodes' records, views and locks.
	StateRoot = DefaultStateDir
	// LogRoot holds log_file.
	LogRoot = "/var/log/rackwire"
	// ConfRoot holds kubernetes.kubeconfig and configuration_path: the CNI configuration
	// directory, where the DaemonSet writes rackwire.d/ and whereabouts' writes whereabouts.d/.
	ConfRoot = "/etc/cni/net.d"
	// ConfRootAlt is where whereabouts' flat file lives on OpenShift.
	ConfRootAlt = "/etc/kubernetes/cni/net.d"
)

// Roots are the directories a configuration's paths may lie under, by kind.
type Roots struct {
	// State is for state_dir.
	State []string `json:"state"`
	// Log is for log_file.
	Log []string `json:"log"`
	// Config is for kubernetes.kubeconfig and configuration_path.
	Config []string `json:"config"`
}

// DefaultRoots are the DaemonSet's directories.
var DefaultRoots = Roots{State: []string{StateRoot}, Log: []string{LogRoot}, Config: []string{ConfRoot, ConfRootAlt}}

// AllowedRoots are the roots in force: DefaultRoots unless the plugin's own install wrote a
// roots file beside the binary (RootsFile); a configuration never changes them.
var AllowedRoots = DefaultRoots

// RootsFileName is the roots file the install writes beside the binary, in the node's CNI
// bin directory: whoever may write there owns the node already.
const RootsFileName = "rackwire.roots"

// RootsFile is the roots file of the binary at path.
func RootsFile(binary string) string { return filepath.Join(filepath.Dir(binary), RootsFileName) }

// LoadRoots reads the roots file beside binary into AllowedRoots; without one the defaults
// stay.
func LoadRoots(binary string) error {
	b, err := os.ReadFile(RootsFile(binary))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	r := Roots{}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", RootsFile(binary), err)
	}
	for _, l := range [][]string{r.State, r.Log, r.Config} {
		for _, d := range l {
			if !filepath.IsAbs(d) {
				return fmt.Errorf("%s: %q is not an absolute path", RootsFile(binary), d)
			}
		}
	}
	AllowedRoots = r
	return nil
}

// WriteRoots writes r as the roots file of the binary at path.
func WriteRoots(binary string, r Roots) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return writeIfChanged(RootsFile(binary), append(b, '\n'), 0o644)
}

// confine checks that the path of key lies under one of roots (or is one, with dirOK). The
// check is on the cleaned path, so ".." cannot climb out; a symbolic link inside a root
// could, but only root on the node can make one there.
func confine(key, path string, roots []string, dirOK bool) error {
	if path == "" {
		return nil
	}
	if !filepath.IsAbs(path) {
		return keyErr(key, "%q is not an absolute path", path)
	}
	p := filepath.Clean(path)
	for _, r := range roots {
		r = filepath.Clean(r)
		if (dirOK && p == r) || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return nil
		}
	}
	return keyErr(key, "%q is outside the directories the plugin's DaemonSet installs (%s): the plugin runs as root and writes or reads no other path a NetworkAttachmentDefinition names", path, strings.Join(roots, ", "))
}

// confineState checks state_dir: one of the state roots itself, not a directory below one.
// A network's node state (its lock, records and views of its pools) must have one place on
// the node, shared by every NAD of the same pools: two NADs of one pool with their own
// state_dir would each hand out what the other holds once a reservation is gone.
func confineState(key, path string, roots []string) error {
	if err := confine(key, path, roots, true); err != nil || path == "" {
		return err
	}
	p := filepath.Clean(path)
	for _, r := range roots {
		if p == filepath.Clean(r) {
			return nil
		}
	}
	return keyErr(key, "%q is below the plugin's state directory (%s), not that directory: every NetworkAttachmentDefinition must keep its node state in the same place, so that NADs of one pool share it", path, strings.Join(roots, ", "))
}
