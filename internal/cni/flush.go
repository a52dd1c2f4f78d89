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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A write to an IPPool costs the apiserver in proportion to the pool's entries (about 8 ms
// at 10, 190 ms at 1,000 measured here), so in node-slice mode an ADD does not wait for it:
// once the address's reservation exists (the cluster-wide lock) and the attachment's record
// says "pending", the ADD answers, and a flusher process of the node writes the pending
// entries of all attachments into their pools in one patch per pool. Nobody else allocates
// in a node's slice (whereabouts binaries sharing a network set whereabouts_lease, which
// keeps writes synchronous), the node's view of the pool holds pending addresses, and DEL
// waits for an entry a live flusher is writing, so the pool only lags, never lies.

// FlushCommand is the plugin binary, set by its main: an ADD starts `FlushCommand flush
// <dir>` to write behind it. Left empty (the verbs called in-process by tests), the ADD
// flushes before it returns.
var FlushCommand string

// flushIdle is how long a flusher waits for new entries before it exits.
const flushIdle = time.Second

// flushWindow is how long an entry waits before a flusher writes it: ADDs of a burst meet in
// one pool write, and a pod deleted within it never costs one (its DEL drops the entry).
const flushWindow = 100 * time.Millisecond

// flushQuiet is how long no new entry must come for a flusher to write before the window
// ends: the DEL that often follows an ADD at once (a pod replaced) comes along.
const flushQuiet = 30 * time.Millisecond

// largePool is the size, as the apiserver answers a write of it, from which a pool's writes
// are spaced (see due): about 270 entries of 64-character container IDs. A pool of 1,000
// (180 kB) cost the apiserver 65-190 ms a write here; one of 16 (3 kB), a few milliseconds.
const largePool = 48 << 10

// flushWindowMax bounds the window a slow pool write stretches (see nextWindow).
const flushWindowMax = time.Second

// nextWindow is the window after a flush whose pool writes took took: a pool write costs the
// apiserver in proportion to the pool, and the node's ADDs wait for their reservations on
// that same apiserver, so a flusher keeps its writes to at most a third of the time: twice
// the last write's duration between writes, more entries in each.
func nextWindow(took time.Duration) time.Duration {
	return min(max(flushWindow, 2*took), flushWindowMax)
}

// Without reservations (enable_overlapping_ranges: false) the pool entry is the only lock,
// so it is written before the ADD answers.
func (c *call) deferred() bool {
	return c.cfg.SliceSize != "" && !c.cfg.WhereaboutsLease && c.cfg.OverlappingRanges
}

// refreshedBehind says whether a flusher process reads stale views of the pools again.
func (c *call) refreshedBehind() bool { return c.deferred() && FlushCommand != "" }

func (c *call) markPending(rec *record, addr netip.Addr) error {
	for i := range rec.Entries {
		if rec.Entries[i].Address == addr.String() {
			rec.Entries[i].Pending, rec.Entries[i].Reserving = true, false
		}
	}
	if err := c.st.save(rec); err != nil {
		return err
	}
	return c.st.markPending(rec.ContainerID, rec.IfName)
}

// flusherConf is what a flusher process needs to act for the node.
type flusherConf struct {
	Config json.RawMessage `json:"config"`
	Node   string          `json:"node"`
}

func (s *state) flusherLock() string { return filepath.Join(s.dir, ".flusher") }

// flusherAlive says whether a flusher holds the node's flusher lock.
func (s *state) flusherAlive() bool {
	f, alive := s.probeFlusher()
	if f != nil {
		_ = f.Close()
	}
	return alive
}

// probeFlusher looks for a flusher: alive when one holds the flusher lock, else the lock
// as a probe holds it (closing the file lets it go). A probe holds it shared, a flusher (and
// the ADD that starts one) exclusive: an ADD that finds it held can tell a probe from a
// flusher, and two probes do not take each other for one.
func (s *state) probeFlusher() (*os.File, bool) {
	f, err := os.OpenFile(s.flusherLock(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false
	}
	if errors.Is(unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB), unix.EWOULDBLOCK) {
		_ = f.Close()
		return nil, true
	}
	return f, false
}

// kickFlusher makes sure a flusher will write the pending entries: inline without a
// binary, else a detached flusher process unless one is running.
//
// The ADD takes the flusher's lock itself and hands it to the flusher it starts (as fd 3):
// a flusher probed for while it starts up is already holding it. Probing and starting apart,
// the ADDs of a burst each found the lock free before the first flusher had taken it, and
// started up to four flushers a node, each reading its configuration and the apiserver.
func (c *call) kickFlusher(stdin []byte) error {
	if FlushCommand == "" {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
		defer cancel()
		_, err := c.flushOnce(ctx, flushDue{})
		return err
	}
	lock, err := os.OpenFile(c.st.flusherLock(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	// Closed without an unlock: once the flusher has its copy, the lock is the flusher's.
	defer func() { _ = lock.Close() }()
	handOver := true
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		if c.st.flusherAlive() {
			return nil // a flusher runs, or is being started with the lock
		}
		// Only probes hold it, for an instant: the flusher takes it itself once they have
		// gone. Taken for a flusher, a probe left the entry unwritten with none running.
		handOver = false
	} else if err != nil {
		return err
	}
	b, err := json.Marshal(flusherConf{Config: stdin, Node: c.node})
	if err != nil {
		return err
	}
	if err := writeIfChanged(filepath.Join(c.st.dir, ".flusher.json"), b, 0o600); err != nil {
		return err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer func() { _ = devnull.Close() }()
	cmd := exec.Command(FlushCommand, "flush", c.st.dir)
	if handOver {
		cmd.Args = append(cmd.Args, LockedFlag)
		cmd.ExtraFiles = []*os.File{lock}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	// Its own session: the runtime waits for the plugin, not for the flusher.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the pool flusher: %w", err)
	}
	return cmd.Process.Release()
}

// LockedFlag tells `rackwire flush <dir>` that its fd 3 is the node's flusher lock, taken
// for it by the ADD or DEL that started it.
const LockedFlag = "--locked"

// inheritedLock is fd 3 when it is the flusher lock of st (the same file, by device and
// inode), else nil: a flusher started by hand or by an older plugin takes the lock itself.
func inheritedLock(st *state) *os.File {
	// Checked before an os.File owns fd 3: its finalizer would close whatever fd 3 is.
	var got, want unix.Stat_t
	if unix.Fstat(3, &got) != nil || unix.Stat(st.flusherLock(), &want) != nil || got.Dev != want.Dev || got.Ino != want.Ino {
		return nil
	}
	// Inherited without close-on-exec: what the flusher runs (a kubeconfig's credential
	// plugin) would hold the lock too, and keep it past a flusher that was killed.
	unix.CloseOnExec(3)
	return os.NewFile(3, st.flusherLock())
}

// RunFlusher is `rackwire flush <dir>`: it writes pending entries until none came for
// flushIdle, and exits; a second flusher of the same node and network waits for the first.
// locked says fd 3 holds the flusher lock already (kickFlusher).
func RunFlusher(dir string, locked bool) error {
	b, err := os.ReadFile(filepath.Join(dir, ".flusher.json"))
	if err != nil {
		return err
	}
	fc := flusherConf{}
	if err := json.Unmarshal(b, &fc); err != nil {
		return err
	}
	cfg, err := ParseConfig(fc.Config)
	if err != nil {
		return err
	}
	st := &state{dir: dir}
	// Made close-on-exec before the kubeconfig is read: reading it runs its credential
	// program, if it names one.
	var lock *os.File
	if locked {
		lock = inheritedLock(st)
	}
	k, err := newKube(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	c := &call{cfg: cfg, kube: k, node: fc.Node, st: st}
	if filepath.Base(dir) != safeName(cfg.Name) {
		c.legacy = legacyState(cfg, fc.Node)
	}
	held := lock != nil
	if lock == nil {
		if lock, err = os.OpenFile(c.st.flusherLock(), os.O_CREATE|os.O_RDWR, 0o600); err != nil {
			return err
		}
	}
	defer func() { _ = lock.Close() }()
	for {
		// Wait for the lock rather than give up on finding it taken: a DEL, GC or ADD that
		// probes for a flusher holds it for an instant, and a flusher starting then would
		// leave its entries unwritten; another flusher holds it only until it goes idle, and
		// this one then looks for what is left.
		if !held {
			if err := flockWait(lock); err != nil {
				return err
			}
		}
		held = false
		idleSince := time.Now()
		var refreshed, wroteAt, swept time.Time
		window := flushWindow
		for time.Since(idleSince) < flushIdle {
			ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
			due := c.due(window, wroteAt, time.Now())
			n, err := c.flushOnce(ctx, due)
			if n > 0 {
				window, wroteAt = nextWindow(c.wrote), time.Now()
			}
			// The slice and the views age by 10 s and 30 s: a look a second is enough, and the
			// views of a full slice are not parsed every 20 ms.
			if time.Since(refreshed) >= time.Second {
				err = errors.Join(err, c.refreshSlice(ctx), c.refreshViews(ctx), c.refreshClaimsBehind(ctx), c.refreshSiblingsBehind(ctx))
				refreshed = time.Now()
			}
			if time.Since(swept) >= time.Minute {
				c.st.removeStaleTemps()
				swept = time.Now()
			}
			cancel()
			if n > 0 {
				idleSince = time.Now()
			}
			if n == 0 || err != nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
		_ = unix.Flock(int(lock.Fd()), unix.LOCK_UN)
		// An ADD that found the lock held just before it went relies on this look.
		if n, err := c.pending(); err != nil || n == 0 {
			return err
		}
	}
}

// due is when the flusher writes next, its last write having ended at wroteAt. A quiet node
// gets its write at once, but writes of a large pool stay apart by their own duration: a
// trickle of pods does not keep the apiserver writing the pool. Unless the pods come further
// apart than a write takes (flushDue's apart): a write then fits between two of them.
//
// Writes of small pools only (wroteSmall) are not spaced: they cost the apiserver a few
// milliseconds, so one meeting the next pod's ADD delays it by no more, while their duration
// on a node busy with a burst is mostly the wait for CPU. Spaced by it, the tail of a burst
// of 16 pods (a write of 250 ms during the burst, of 5 ms once the node was quiet) reached
// the pool a quarter of a second after the burst's last ADD.
func (c *call) due(window time.Duration, wroteAt, now time.Time) flushDue {
	d := flushDue{window: window, quiet: flushQuiet}
	if now.Sub(wroteAt) < c.wrote && !c.wroteSmall {
		d.after, d.apart = c.lastMarked, c.wrote+flushQuiet
	}
	return d
}

func flockWait(f *os.File) error {
	return flockFD(int(f.Fd()))
}

func flockFD(fd int) error {
	for {
		err := unix.Flock(fd, unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// errLockWait is a lock not had within its wait.
var errLockWait = errors.New("lock not had in time")

// flockWithin takes f's lock, waiting for it at most wait (for good when wait is zero). The
// lock is asked for once without waiting, and otherwise waited for in a goroutine: flock(2)
// has no timeout, and polling it would put a queue of ADDs behind a burst out of order and
// each a poll's pause late. On errLockWait the goroutine keeps f, still waiting, and closes
// it once flock returns, which lets the lock go at once: the caller must not close f, whose
// descriptor number could then be reused under the goroutine's flock.
func flockWithin(f *os.File, wait time.Duration) error {
	fd := int(f.Fd())
	if wait <= 0 {
		return flockFD(fd)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
		return err
	}
	var mu sync.Mutex
	gaveUp := false
	done := make(chan error, 1)
	go func() {
		err := flockFD(fd)
		mu.Lock()
		defer mu.Unlock()
		if gaveUp {
			_ = f.Close()
			return
		}
		done <- err
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case err := <-done:
		return err
	default:
		gaveUp = true
		return errLockWait
	}
}

// flushBackoff is how long an entry the pool did not take waits before its next try: the
// pool is read and patched once per try, never on every pass of the flusher.
func flushBackoff(tries int) time.Duration {
	return min(100*time.Millisecond<<min(tries, 10), flushBackoffMax)
}

// flushBackoffMax is the longest wait flushBackoff gives.
const flushBackoffMax = 30 * time.Second

// backingOff says whether e waits for its next try at now. A RetryAt further off than the
// longest backoff was set before the clock stepped back: the try is due, not once the clock
// has caught up.
func (e entry) backingOff(now time.Time) bool {
	return e.RetryAt.After(now) && !e.RetryAt.After(now.Add(flushBackoffMax))
}

// pending counts the node's attachments with entries the flusher has to write or take out.
// An entry still Reserving is not its work: a live ADD kicks a flusher once it is reserved,
// and one killed in between (a reboot, an OOM kill) leaves it Reserving until its DEL, which
// need never come; counted, it would keep the flusher polling the apiserver for good.
func (c *call) pending() (int, error) {
	if err := c.st.Lock(); err != nil {
		return 0, err
	}
	defer c.st.Unlock()
	recs, err := c.st.pendingRecords()
	n := 0
	for _, r := range recs {
		if slices.ContainsFunc(r.Entries, func(e entry) bool { return e.Releasing || e.Pending && !e.Reserving }) {
			n++
		}
	}
	return n, err
}

// flushDue says when a flusher writes: once the oldest entry with work has waited window
// (the ADDs of a burst meet in one write), or once none came for quiet (a lone pod, the end
// of a burst: the write goes while the node is idle, not into the next pod's ADD, which waits
// for its reservation on the apiserver the write keeps busy). Every entry with work then
// comes along, the youngest too: a pool write costs the apiserver the whole pool whether it
// carries one entry or ten. The zero value writes at once.
//
// With apart set (a write ended a moment ago), the quiet rule holds only for entries whose
// oldest came at least apart after the newest entry of the last write (after): pods that
// come that far apart leave room for a write between two of them, and the write that goes
// once the node is quiet ends before the next pod's ADD. Held back for the window instead,
// it would start at a moment unrelated to the pods' and meet the next ADD on the apiserver
// (a pool of 1,000 entries is 65-190 ms of its time). Pods that come closer than apart meet
// in the window, as before.
type flushDue struct {
	window, quiet time.Duration
	after         time.Time
	apart         time.Duration
}

func (d flushDue) now(recs []*record, now time.Time) bool {
	if d.window <= 0 {
		return true
	}
	var oldest, newest time.Time
	for _, r := range recs {
		// Entries waiting for a retry, or for their reservation (an ADD killed midway), do
		// not make a write due, or hold one back.
		if !workNow(r, now) || r.marked.IsZero() {
			continue
		}
		marked := r.marked
		if marked.After(now) {
			// Marked before the clock stepped back: how long it has waited is unknown, and
			// waiting for the clock to catch up would leave the pool without it meanwhile.
			marked = now.Add(-d.window)
		}
		if oldest.IsZero() || marked.Before(oldest) {
			oldest = marked
		}
		if marked.After(newest) {
			newest = marked
		}
	}
	quiet := d.quiet > 0 && (d.apart <= 0 || oldest.Sub(d.after) >= d.apart)
	return !oldest.IsZero() && (now.Sub(oldest) >= d.window || quiet && now.Sub(newest) >= d.quiet)
}

// workNow says whether flushOnce would write anything of r now.
func workNow(r *record, now time.Time) bool {
	if releasing(r) {
		return !slices.ContainsFunc(r.Entries, func(e entry) bool { return e.backingOff(now) })
	}
	return slices.ContainsFunc(r.Entries, func(e entry) bool { return e.writable(now) })
}

// writable says whether e is an entry to write into its pool now: pending, reserved, not
// waiting for its next try.
func (e entry) writable(now time.Time) bool {
	return e.Pending && !e.Reserving && !e.backingOff(now)
}

type flushItem struct {
	rec   *record
	entry entry
}

// flushOnce writes the pending entries once, and takes the released ones out: picked under
// the node lock, written without it (ADDs and DELs go on meanwhile) in one patch per pool,
// then marked written (or their records dropped) under the lock again.
func (c *call) flushOnce(ctx context.Context, due flushDue) (int, error) {
	if err := c.st.Lock(); err != nil {
		return 0, err
	}
	recs, err := c.st.pendingRecords()
	now := time.Now()
	if err == nil && !due.now(recs, now) {
		recs = nil
	}
	adds, removes := map[string][]flushItem{}, map[string][]flushItem{}
	var releases []*record
	n := 0
	for _, r := range recs {
		if workNow(r, now) && r.marked.After(c.lastMarked) && !r.marked.After(now) {
			c.lastMarked = r.marked
		}
		if releasing(r) {
			if !workNow(r, now) {
				continue
			}
			releases = append(releases, r)
			n++
			for _, e := range r.Entries {
				if maybeWritten(e) {
					removes[e.Pool] = append(removes[e.Pool], flushItem{rec: r, entry: e})
				}
			}
			continue
		}
		changed := false
		for i := range r.Entries {
			if e := &r.Entries[i]; e.writable(now) {
				e.Flushing, changed = true, true
				adds[e.Pool] = append(adds[e.Pool], flushItem{rec: r, entry: *e})
				n++
			}
		}
		if changed && err == nil {
			err = c.st.save(r)
		}
	}
	c.st.Unlock()
	if err != nil || n == 0 {
		return n, err
	}
	res := newFlushResult()
	var errs []error
	start := time.Now()
	c.kube.largestAnswer.Store(0)
	for pool := range joinKeys(adds, removes) {
		if err := c.writePool(ctx, pool, adds[pool], removes[pool], res); err != nil {
			errs = append(errs, err)
		}
	}
	c.wrote = time.Since(start)
	largest := c.kube.largestAnswer.Load()
	c.wroteSmall = largest > 0 && largest < largePool
	done := map[string]bool{}
	unsure := map[string][]string{}
	for _, r := range releases {
		names, err := c.unreserveReleased(ctx, r, res)
		k := r.ContainerID + "/" + r.IfName
		done[k], unsure[k] = err == nil, names
		errs = append(errs, err)
	}
	if err := c.st.Lock(); err != nil {
		return n, err
	}
	var refusals []refusedWrite
	defer func() {
		c.st.Unlock()
		c.tellRefused(refusals)
	}()
	for _, r := range releases {
		k := r.ContainerID + "/" + r.IfName
		if done[k] && len(unsure[k]) > 0 {
			ok, err := c.checkReleased(ctx, r, unsure[k])
			done[k] = ok
			errs = append(errs, err)
		}
		errs = append(errs, c.finishRelease(r, done[k]))
	}
	for _, r := range recs {
		if releasing(r) {
			continue
		}
		cur, err := c.st.load(r.ContainerID, r.IfName)
		if err != nil || cur == nil {
			continue
		}
		if !anyPending(cur) {
			c.st.unmarkPending(cur)
			continue
		}
		changed := false
		for i := range cur.Entries {
			e := &cur.Entries[i]
			if !e.Flushing {
				continue
			}
			e.Flushing, changed = false, true
			id := e.Pool + "/" + e.Address
			if res.written[id] {
				e.Pending, e.Tried, e.Tries, e.RetryAt, e.Refused, e.Told = false, false, 0, time.Time{}, "", ""
				continue
			}
			// Refused for certain (the offset held by a live attachment, the apiserver's
			// admission or validation): CHECK says so until a write lands. Else an answer
			// that proves nothing: then it may be in the pool, and DEL must take it out.
			why, refused := res.refused[id]
			if why != "" || !refused {
				// "": refused with a batch, not known why: its own last reason stands.
				e.Refused = why
			}
			if why != "" && why != e.Told {
				e.Told = why
				refusals = append(refusals, refusedWrite{rec: cur, entry: *e})
			}
			e.Tried = e.Tried || !refused
			e.Tries++
			e.RetryAt = time.Now().Add(flushBackoff(e.Tries))
		}
		if changed {
			errs = append(errs, c.st.save(cur))
		}
		if !anyPending(cur) {
			c.st.unmarkPending(cur)
		}
	}
	return n, errors.Join(errs...)
}

// anyPending says whether the flusher has work on r: entries to write, or to take out.
func anyPending(r *record) bool {
	for _, e := range r.Entries {
		if e.Pending || e.Releasing {
			return true
		}
	}
	return false
}

func joinKeys(a, b map[string][]flushItem) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// waitFlushed waits, without the node lock, until no entry of rec is being written by a
// live flusher; it returns the record as it then stands (nil when gone), the lock held.
func (c *call) waitFlushed(ctx context.Context, rec *record) (*record, error) {
	for {
		busy := false
		for _, e := range rec.Entries {
			busy = busy || e.Flushing
		}
		if !busy || !c.st.flusherAlive() {
			return rec, nil
		}
		c.st.Unlock()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the pool flusher: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if err := c.st.Lock(); err != nil {
			return nil, err
		}
		cur, err := c.st.load(rec.ContainerID, rec.IfName)
		if err != nil || cur == nil {
			return cur, err
		}
		rec = cur
	}
}
