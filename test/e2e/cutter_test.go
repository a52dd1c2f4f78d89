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

package e2e

import (
	"io"
	"net"
	"net/url"
	"sync"
)

// cutter is a TCP relay to the apiserver that a test can cut (every connection closed, new
// ones refused, as when the apiserver stops) and restore.
type cutter struct {
	target string
	ln     net.Listener
	mu     sync.Mutex
	up     bool
	conns  map[net.Conn]bool
}

func newCutter(apiserver string) (*cutter, error) {
	u, err := url.Parse(apiserver)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &cutter{target: u.Host, ln: ln, up: true, conns: map[net.Conn]bool{}}
	go c.serve()
	return c, nil
}

func (c *cutter) addr() string { return c.ln.Addr().String() }

func (c *cutter) serve() {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		up := c.up
		c.mu.Unlock()
		if !up {
			_ = in.Close()
			continue
		}
		out, err := net.Dial("tcp", c.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		c.mu.Lock()
		c.conns[in], c.conns[out] = true, true
		c.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

// stop cuts every connection and refuses new ones.
func (c *cutter) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.up = false
	for conn := range c.conns {
		_ = conn.Close()
	}
	c.conns = map[net.Conn]bool{}
}

func (c *cutter) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.up = true
}

func (c *cutter) close() { _ = c.ln.Close(); c.stop() }
