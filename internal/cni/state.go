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
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// record is what rackwire on this node wrote for one attachment (container, interface):
// written before each reservation is created, so that DEL and GC can undo an ADD that was
// cut short anywhere, and only what this node's rackwire wrote.
type record struct {
	ContainerID string `json:"containerID"`
	IfName      string `json:"ifName"`
	PodRef      string `json:"podRef,omitempty"`
	// PodUID is the runtime's K8S_POD_UID, for the Events the flusher sends about the pod.
	PodUID string `json:"podUID,omitempty"`
	// Network is the configuration's name: NADs of one pool share the node's directory,
	// and the runtime's GC of one names only its own attachments.
	Network string  `json:"network,omitempty"`
	Claim   string  `json:"claim,omitempty"`
	Entries []entry `json:"entries,omitempty"`
	// Gen tells this life of the attachment (from its ADD to its release) from a later one of
	// the same container and interface: a release carried out behind the node's lock, by the
	// flusher, must finish only its own (records of older versions have none).
	Gen string `json:"gen,omitempty"`
	// marked is when the pending index last named the record (pendingRecords only).
	marked time.Time
}

// newGen is a fresh record's Gen.
func newGen() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// entry is one address of an attachment: its pool and its reservation.
type entry struct {
	Pool        string `json:"pool"`
	Range       string `json:"range"`
	Address     string `json:"address"`
	Reservation string `json:"reservation"`
	// ReservationUID and ReservationVersion are the reservation object this attachment's ADD
	// created (or found its own), as it then was: a release behind the node's lock deletes
	// that object only, never a later holder's of the same name, which may be this very
	// container and interface again.
	ReservationUID     string `json:"reservationUID,omitempty"`
	ReservationVersion string `json:"reservationVersion,omitempty"`
	// Pending: reserved and handed out, not yet in the pool (the flusher writes it).
	Pending bool `json:"pending,omitempty"`
	// Flushing: a flusher is writing it now; DEL waits for it while that flusher lives.
	Flushing bool `json:"flushing,omitempty"`
	// Tried: a write of it was sent whose answer did not prove it failed (it may be in the
	// pool): DEL removes it from the pool as if written.
	Tried bool `json:"tried,omitempty"`
	// Reserving: picked, its reservation being created by an ADD that let go of the node's
	// lock meanwhile; the flusher leaves it alone until the reservation is the ADD's.
	Reserving bool `json:"reserving,omitempty"`
	// Releasing: its attachment had its DEL; the flusher takes it out of the pool (with the
	// node's other pool writes), deletes its reservation, and then the record.
	Releasing bool `json:"releasing,omitempty"`
	// Tries and RetryAt hold back an entry the pool refused (its offset held by a live
	// attachment of this node): the flusher tries it again at RetryAt, backing off, instead
	// of a GET and a PATCH on every pass.
	Tries   int       `json:"tries,omitempty"`
	RetryAt time.Time `json:"retryAt,omitzero"`
	// Refused is why the last write of a pending entry was turned down for certain (its
	// offset held by another attachment, the apiserver's admission or validation): the
	// attachment is not in its pool, and CHECK says so. An answer that proves nothing
	// clears it; a patch of several entries turned down for one of them, when the pool
	// cannot then be read to tell which, leaves it as it was.
	Refused string `json:"refused,omitempty"`
	// Told is the refusal the pod has had an Event about: one per refusal (and reason), not
	// one per try; a write that lands ends it.
	Told string `json:"told,omitempty"`
}

// key is the entry's spec.allocations key in its pool, with its address; ok is false when
// the record holds no parsable address or range.
func (e entry) key() (key string, a netip.Addr, ok bool) {
	a, err := netip.ParseAddr(e.Address)
	pr, perr := netip.ParsePrefix(e.Range)
	if err != nil || perr != nil {
		return "", netip.Addr{}, false
	}
	return Offset(pr.Masked(), a), a, true
}

// state is the node-local directory of one network: <state_dir>/<node>/<network key>/. The
// node is part of the path so simulated nodes sharing a machine keep apart.
type state struct {
	dir  string
	lock *os.File
	// lockBy is when Lock's waits end; zero waits for as long as it takes.
	lockBy time.Time
}

func openState(c *Config, node, namespace string) (*state, error) {
	dir := filepath.Join(c.StateDir, safeName(node), NetworkKey(c, namespace))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	return &state{dir: dir}, nil
}

// NetworkKey names a network's node state after what whereabouts keys its pools by: the
// pools' namespace, network_name and the ranges. Not the configuration's name, even without
// network_name: whereabouts' unnamed network names its pools by range (and node slice) only,
// so NADs of other names with the same range write the same pools and must share the
// node's view of them. Two NADs
// that share a configuration name but not their pools (another network_name, another range,
// a copy in another namespace whose kubeconfig names other pools) share no lock, record,
// view, slice or flusher. The readable part is for people; the hash is the identity. It has
// a "@", which no CNI network name may hold, so it never meets a directory of the old layout
// (<node>/<name>).
func NetworkKey(c *Config, namespace string) string {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "%s\x00%s", namespace, c.PoolNetwork())
	for _, r := range c.Ranges {
		_, _ = fmt.Fprintf(h, "\x00%s", r.Subnet.Masked())
	}
	readable := safeName(c.PoolNetwork())
	if len(readable) > 48 {
		readable = readable[:48]
	}
	return readable + "@" + hex.EncodeToString(h.Sum(nil))[:20]
}

// legacyState is the directory the network's records had before they were keyed by pool
// (<node>/<config name>), nil when there is none. After an upgrade DEL and GC still find
// the attachments recorded there (see legacy.go); nothing new is written into it.
func legacyState(c *Config, node string) *state {
	dir := filepath.Join(c.StateDir, safeName(node), safeName(c.Name))
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil
	}
	return &state{dir: dir}
}

// Lock queues this process behind every other ADD, DEL and GC of the network on this node,
// until lockBy at most.
func (s *state) Lock() error {
	name := filepath.Join(s.dir, ".lock")
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("state lock: %w", err)
	}
	wait := time.Duration(0)
	if !s.lockBy.IsZero() {
		// A deadline passed still gets the one try without waiting.
		wait = max(time.Until(s.lockBy), time.Nanosecond)
	}
	if err := flockWithin(f, wait); err != nil {
		if errors.Is(err, errLockWait) {
			return fmt.Errorf("the node's lock of this network (%s) was not had within the network's timeout: "+
				"another verb of the network's pools on this node, or their pool flusher, holds it", name)
		}
		_ = f.Close()
		return fmt.Errorf("state lock: %w", err)
	}
	s.lock = f
	s.renameOldRecords()
	return nil
}

// namedMarker says that the directory's records are named by recordName: made once every
// record of the earlier naming has been moved to its name.
const namedMarker = ".named"

// renameOldRecords moves, once a directory and under its lock, the records the plugin wrote
// before recordName to their names. The earlier plugin named a record <container>_<interface>
// made safe, which recordName now hashes where that could be another file's ("~", "..",
// a .tmp end): unmoved, such a record reads as no attachment's, its pending entries are never
// written, and its DEL finds nothing of it. A crash part way leaves the marker unmade, and the
// next lock moves the rest.
func (s *state) renameOldRecords() {
	if _, err := os.Lstat(filepath.Join(s.dir, namedMarker)); err == nil {
		return
	}
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, de := range des {
		old := de.Name()
		if de.IsDir() || strings.HasPrefix(old, ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.dir, old))
		r := &record{}
		if err != nil || json.Unmarshal(b, r) != nil || r.ContainerID == "" {
			continue
		}
		// A twin holds its record's names, not its own.
		if safeName(r.ContainerID)+"_"+safeName(r.IfName) != old || recordName(r.ContainerID, r.IfName) == old {
			continue
		}
		if err := s.moveRecord(old, r); err != nil {
			return
		}
	}
	if f, err := os.OpenFile(filepath.Join(s.dir, namedMarker), os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		_ = f.Close()
	}
}

// moveRecord saves r, read from the file old, under its name, with its pending marker, and
// then takes out old's files, the record last.
func (s *state) moveRecord(old string, r *record) error {
	if err := s.save(r); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(s.pendingDir(), old)); err == nil {
		if err := s.markPending(r.ContainerID, r.IfName); err != nil {
			return err
		}
	}
	for _, p := range []string{twin(filepath.Join(s.dir, old)), filepath.Join(s.idleDir(), old), filepath.Join(s.pendingDir(), old), filepath.Join(s.dir, old)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// tryLockFile takes the node's lock of that name in the network's directory, for one part of
// the work rather than all of it, waiting for it at most wait (and while ctx lasts); unlock
// lets it go. ok is false when it was not had (held on, or the file cannot be opened).
// flock(2) has no timeout, so the lock is tried again and again, every few milliseconds.
func (s *state) tryLockFile(ctx context.Context, name string, wait time.Duration) (unlock func(), ok bool) {
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false
	}
	deadline := time.Now().Add(wait)
	for pause := time.Millisecond; ; pause = min(2*pause, 8*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, true
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) || ctx.Err() != nil || time.Now().After(deadline) {
			_ = f.Close()
			return nil, false
		}
		time.Sleep(pause)
	}
}

func (s *state) Unlock() {
	if s.lock != nil {
		_ = s.lock.Close()
		s.lock = nil
	}
}

func (s *state) path(containerID, ifName string) string {
	return filepath.Join(s.dir, recordName(containerID, ifName))
}

// recordName is the file name of an attachment's record: its container and interface names
// joined as they are where the join is a name of no other file, and otherwise made safe and
// told apart by a hash of both. The interface name is the tenant's (a Multus selection names
// it): "n..1" and "n__1" made safe are one name, "n.tmp" is the twin of "n", and "x.tmp-1"
// is a temporary file the sweep removes; two attachments sharing a file free each other's
// addresses.
func recordName(containerID, ifName string) string {
	n := containerID + "_" + ifName
	// "_" joins the names: a container ID with one ("a_b" and "c") could make another's join
	// ("a" and "b_c"), and the runtime chooses container IDs.
	if keptAsIs(containerID) && !strings.Contains(containerID, "_") && keptAsIs(ifName) && !isTempFile(n) && len(n) <= recordNameMax {
		return n
	}
	sum := sha256.Sum256([]byte(containerID + "\x00" + ifName))
	hash := "~" + hex.EncodeToString(sum[:8])
	readable := safeName(containerID) + "_" + safeName(ifName)
	if len(readable)+len(hash) > recordNameMax {
		// The hash tells the attachment; the readable part is only for people. Cut at a
		// character's start, so the name stays UTF-8.
		cut := shortReadable
		for cut > 0 && !utf8.RuneStart(readable[cut]) {
			cut--
		}
		readable = readable[:cut]
	}
	return readable + hash
}

// recordNameMax is the longest record name kept as it is: its twin (".tmp" on the end) must
// be a file name, of at most 255 bytes (NAME_MAX). A longer one could never be saved, so
// no node has a record under it: such a name is cut to shortReadable and hashed instead,
// which leaves room for the suffixes of its spares too. The runtime chooses container IDs,
// of any length.
const (
	recordNameMax = 255 - len(".tmp")
	shortReadable = 200
)

// keptAsIs says whether a name goes into a record's file name unchanged: no "~" (which only
// hashed names carry), and nothing safeName would change.
func keptAsIs(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/\x00~") && !strings.Contains(s, "..")
}

// load returns the attachment's record, nil when there is none.
func (s *state) load(containerID, ifName string) (*record, error) {
	b, err := os.ReadFile(s.path(containerID, ifName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeRecord(s.path(containerID, ifName), b), nil
}

// decodeRecord is the record in b, read from path; nil when b is no whole record of the
// attachment the path names. Only the file system makes one (a record is written whole and
// swapped in): a power cut on a file system that keeps no order between a file's data and
// its directory's names (ext4 without a journal) can leave a record's name on an empty
// file, or on another attachment's file written since (a save's swap lost and the next
// save's truncation kept; a spare's move out of .spare lost and its new name kept). The
// record's twin then holds its last version but one, or its last, whole: that is read
// instead. Taken for none when neither reads, it leaves DEL its way without a record, and
// the rest of the node's records to GC and the flusher, where an error would fail each of
// them for good.
func decodeRecord(path string, b []byte) *record {
	r, err := recordIn(path, b)
	if err == nil {
		return r
	}
	if tb, terr := os.ReadFile(twin(path)); terr == nil {
		if r, terr := recordIn(path, tb); terr == nil {
			fmt.Fprintf(os.Stderr, "rackwire: state record %s is unreadable (%v): its twin is read instead\n", path, err)
			return r
		}
	}
	fmt.Fprintf(os.Stderr, "rackwire: state record %s is unreadable (%v): taken for none\n", path, err)
	return nil
}

// recordIn decodes b as the record of the attachment path names.
func recordIn(path string, b []byte) (*record, error) {
	r := &record{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, err
	}
	if filepath.Base(path) != recordName(r.ContainerID, r.IfName) {
		return nil, fmt.Errorf("it is the record of container %q, interface %q", r.ContainerID, r.IfName)
	}
	return r, nil
}

// save writes r atomically: a crash leaves the old record or the new one. The new one is
// written into the record's twin (<record>.tmp) and swapped in whole; the twin then holds
// the old one, and its inode takes the next save. A new inode for each save, and the old
// record's freed at each rename, made most of a verb's file-system time: ext4 without a
// journal looks past every inode freed in the last moments before it hands one out, and a
// node's burst frees hundreds.
func (s *state) save(r *record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	p := s.path(r.ContainerID, r.IfName)
	// A sweep (the flusher's, without the node's lock) removes the twin of a record not
	// there yet when the twin is old, as a spare moved in is; an older plugin's removes any
	// old twin. Judged before this save opened it and removed before the swap, the twin is
	// gone with what was written into it: it is written again, into a file made now, which
	// no sweep takes for old.
	for try := 0; ; try++ {
		err := s.swapIn(p, b, try == 0)
		if !errors.Is(err, os.ErrNotExist) || try == 2 {
			return err
		}
	}
}

// swapIn writes b into p's twin and swaps it in; spare says whether a missing twin may be
// a spare moved in.
func (s *state) swapIn(p string, b []byte, spare bool) error {
	tmp := twin(p)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0)
	if errors.Is(err, os.ErrNotExist) {
		if spare {
			s.reuse(tmp)
		}
		f, err = os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// A first save has nothing to swap with, and a file system without RENAME_EXCHANGE
	// (EINVAL) gets the plain rename, which frees the old record.
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, p, unix.RENAME_EXCHANGE); err == nil {
		return nil
	}
	return os.Rename(tmp, p)
}

// twin is the file a record's next version is written to before it is swapped in.
func twin(record string) string { return record + ".tmp" }

// remove drops the attachment's record with its twin and its markers, the record last (a
// crash before leaves it for DEL or GC to finish). Their files are kept as spares.
func (s *state) remove(containerID, ifName string) error {
	p := s.path(containerID, ifName)
	name := filepath.Base(p)
	for _, f := range []struct{ path, as string }{
		{twin(p), name + ".twin"},
		{filepath.Join(s.pendingDir(), name), name + ".marker"},
		{filepath.Join(s.idleDir(), name), name + ".marker"},
		{p, name},
	} {
		if err := s.retire(f.path, f.as); err != nil {
			return err
		}
	}
	return nil
}

// spareDir holds the files of attachments gone, for the next ones to write over: a record,
// its twin and its marker each take a new inode otherwise, freed again at the attachment's
// DEL (see save for what that costs).
func (s *state) spareDir() string { return filepath.Join(s.dir, ".spare") }

// maxSpares is how many spare files a node's network keeps past the flusher's sweep: enough
// for a burst of attachments on a node, three files each.
const maxSpares = 256

// reuse moves a spare file to path, when there is one, for the caller to write over.
func (s *state) reuse(path string) {
	d, err := os.Open(s.spareDir())
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(8)
	_ = d.Close()
	for _, n := range names {
		if os.Rename(filepath.Join(s.spareDir(), n), path) == nil {
			return
		}
	}
}

// retire takes path's file out of the way, as a spare named as when it can. A path that is
// gone is no error.
func (s *state) retire(path, as string) error {
	spare := filepath.Join(s.spareDir(), as)
	err := os.Rename(path, spare)
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Lstat(path); errors.Is(serr, os.ErrNotExist) {
			return nil
		}
		if err = os.Mkdir(s.spareDir(), 0o700); err == nil || errors.Is(err, os.ErrExist) {
			err = os.Rename(path, spare)
		}
	}
	if err == nil {
		return nil
	}
	err = os.Remove(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// all returns every record of the network on this node.
func (s *state) all() ([]*record, error) {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []*record
	for _, de := range des {
		n := de.Name()
		if strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".tmp") || de.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.dir, n))
		if err != nil {
			return nil, err
		}
		if r := decodeRecord(filepath.Join(s.dir, n), b); r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// safeName keeps a path element a single element.
func safeName(s string) string {
	if s == "" {
		return "_"
	}
	return strings.NewReplacer("/", "_", "\x00", "_", "..", "__").Replace(s)
}

// The pending index: a marker per attachment with entries not yet in their pool, so a
// flusher reads those records only, not every record of the node.
func (s *state) pendingDir() string { return filepath.Join(s.dir, ".pending") }

// idleDir holds the markers of attachments with nothing pending: a marker moves between it
// and the pending index by rename, and is created and freed once in the attachment's life
// rather than at each ADD, DEL and flush (see save for why inodes matter).
func (s *state) idleDir() string { return filepath.Join(s.dir, ".idle") }

func (s *state) markPending(containerID, ifName string) error {
	name := filepath.Base(s.path(containerID, ifName))
	marker := filepath.Join(s.pendingDir(), name)
	idle := filepath.Join(s.idleDir(), name)
	if err := os.Rename(idle, marker); errors.Is(err, os.ErrNotExist) {
		// No idle marker, or no index yet: then the marker is a spare, or made anew.
		if err := os.MkdirAll(s.pendingDir(), 0o700); err != nil {
			return err
		}
		if os.Rename(idle, marker) != nil {
			s.reuse(marker)
		}
	}
	// Written, not only moved: its time is when the entry became pending (flushDue).
	return os.WriteFile(marker, nil, 0o600)
}

func (s *state) unmarkPending(r *record) {
	name := filepath.Base(s.path(r.ContainerID, r.IfName))
	marker := filepath.Join(s.pendingDir(), name)
	err := os.Rename(marker, filepath.Join(s.idleDir(), name))
	if errors.Is(err, os.ErrNotExist) && os.Mkdir(s.idleDir(), 0o700) == nil {
		err = os.Rename(marker, filepath.Join(s.idleDir(), name))
	}
	if err != nil {
		_ = os.Remove(marker)
	}
}

// staleTemp is the age past which a temporary file in the node's directory is a killed
// writer's: a live one renames its own within moments.
const staleTemp = 10 * time.Minute

// removeStaleTemps takes out what killed writers and older plugins leave behind: the
// temporary files of writers killed before their rename (a runtime ends an ADD past its
// timeout), each writer's with a name of its own that nothing would ever write over; a
// record's twin once its record is gone; and idle markers of records gone (an older plugin's
// flusher or DEL drops a record and its pending marker only). A live record's twin stays
// however old: the record's next save reuses it. The flusher calls it, off the verbs' path:
// reading the directory reads every record's name.
func (s *state) removeStaleTemps() {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	gone := func(name string) bool {
		_, err := os.Lstat(filepath.Join(s.dir, name))
		return errors.Is(err, os.ErrNotExist)
	}
	for _, de := range des {
		if de.IsDir() || !isTempFile(de.Name()) {
			continue
		}
		if rec, ok := strings.CutSuffix(de.Name(), ".tmp"); ok && !strings.HasPrefix(rec, ".") && !gone(rec) {
			continue
		}
		if info, err := de.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(s.dir, de.Name()))
		}
	}
	idle, _ := os.ReadDir(s.idleDir())
	for _, de := range idle {
		if gone(de.Name()) {
			_ = os.Remove(filepath.Join(s.idleDir(), de.Name()))
		}
	}
	spares, _ := os.ReadDir(s.spareDir())
	for _, de := range spares[min(len(spares), maxSpares):] {
		_ = os.Remove(filepath.Join(s.spareDir(), de.Name()))
	}
}

// pendingRecords loads the records the index names, each with its marker's time, dropping
// markers of records gone.
func (s *state) pendingRecords() ([]*record, error) {
	des, err := os.ReadDir(s.pendingDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*record
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(s.dir, de.Name()))
		if errors.Is(err, os.ErrNotExist) {
			_ = os.Remove(filepath.Join(s.pendingDir(), de.Name()))
			continue
		}
		if err != nil {
			return nil, err
		}
		r := decodeRecord(filepath.Join(s.dir, de.Name()), b)
		if r == nil {
			// Not flushed as it is, nor read again at every pass.
			_ = os.Remove(filepath.Join(s.pendingDir(), de.Name()))
			continue
		}
		if info, err := de.Info(); err == nil {
			r.marked = info.ModTime()
		}
		out = append(out, r)
	}
	return out, nil
}
