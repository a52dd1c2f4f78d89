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
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/containernetworking/cni/pkg/skel"
)

// Logged wraps a verb so that its failures also go to the configuration's log_file, as
// whereabouts logs there: the runtime's own log keeps only the last error of a pod.
func Logged(verb string, f func(*skel.CmdArgs) error) func(*skel.CmdArgs) error {
	return func(args *skel.CmdArgs) error {
		err := f(args)
		if err == nil {
			return nil
		}
		cfg, perr := ParseConfig(args.StdinData)
		if perr != nil {
			return err
		}
		logLine(cfg, "error", fmt.Sprintf("%s network %q container %s interface %s: %v", verb, cfg.Name, args.ContainerID, args.IfName, err))
		return err
	}
}

// warn logs what the configuration's reading ignored: on stderr, which the runtime keeps,
// and in log_file.
func warn(cfg *Config) {
	for _, w := range cfg.Warnings {
		fmt.Fprintf(os.Stderr, "rackwire: network %q: %s\n", cfg.Name, w)
		logLine(cfg, "warning", fmt.Sprintf("network %q: %s", cfg.Name, w))
	}
}

// logLine appends a line to log_file, if set. log_file lies under LogRoot (ParseConfig
// checked it); the directory is made on the first line, and a symbolic link put in the
// file's place is not followed.
func logLine(cfg *Config, level, msg string) {
	if cfg.LogFile == "" {
		return
	}
	_ = os.MkdirAll(filepath.Dir(cfg.LogFile), 0o755)
	if lf, err := os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND|unix.O_NOFOLLOW, 0o644); err == nil {
		_, _ = fmt.Fprintf(lf, "%s [%s] %s\n", time.Now().UTC().Format(time.RFC3339Nano), level, msg)
		_ = lf.Close()
	}
}
