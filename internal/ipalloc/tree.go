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

// freeTree is the free space of one family: a treap of disjoint, non-adjacent free
// intervals ordered by first address, each node knowing how many free addresses its
// subtree holds. That count is what makes a uniform random pick O(log n): draw an index
// below the total and walk down to the interval that holds it.
//
// Nodes live in pages of pageSize and link by index: a million-interval tree is then a
// thousand pointer-free objects for the garbage collector instead of a million, and
// growing it never copies more than the first page. The first page grows on demand, so
// that the many small pools of a cluster stay small.
type freeTree struct {
	pages [][]node // node 0 is the nil node: zero sum, never written
	spare []int32
	root  int32
	seed  uint64  // treap priorities; fixed so that runs are reproducible
	path  []int32 // scratch: the nodes from the root to the last one found
}

type node struct {
	lo, hi      uint128
	sum         uint128 // free addresses in this subtree
	left, right int32
	prio        uint32
}

const pageBits = 10
const pageSize = 1 << pageBits

func newFreeTree() freeTree {
	return freeTree{pages: [][]node{make([]node, 1)}, seed: 0x9e3779b97f4a7c15}
}

func (t *freeTree) n(x int32) *node { return &t.pages[x>>pageBits][x&(pageSize-1)] }

func (t *freeTree) total() uint128 { return t.n(t.root).sum }

func (t *freeTree) len() int {
	last := len(t.pages) - 1
	return last*pageSize + len(t.pages[last]) - 1 - len(t.spare)
}

func (t *freeTree) priority() uint32 {
	// splitmix64
	t.seed += 0x9e3779b97f4a7c15
	z := t.seed
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return uint32(z ^ (z >> 31))
}

func (t *freeTree) alloc(lo, hi uint128) int32 {
	n := node{lo: lo, hi: hi, sum: span(lo, hi), prio: t.priority()}
	if k := len(t.spare); k > 0 {
		x := t.spare[k-1]
		t.spare = t.spare[:k-1]
		*t.n(x) = n
		return x
	}
	last := len(t.pages) - 1
	if len(t.pages[last]) == pageSize {
		t.pages = append(t.pages, make([]node, 0, pageSize))
		last++
	}
	t.pages[last] = append(t.pages[last], n)
	return int32(last*pageSize + len(t.pages[last]) - 1)
}

func (t *freeTree) update(x int32) {
	n := t.n(x)
	n.sum = span(n.lo, n.hi).add(t.n(n.left).sum).add(t.n(n.right).sum)
}

// split cuts x into the intervals starting before k and the others.
func (t *freeTree) split(x int32, k uint128) (int32, int32) {
	if x == 0 {
		return 0, 0
	}
	if t.n(x).lo.less(k) {
		l, r := t.split(t.n(x).right, k)
		t.n(x).right = l
		t.update(x)
		return x, r
	}
	l, r := t.split(t.n(x).left, k)
	t.n(x).left = r
	t.update(x)
	return l, x
}

// merge joins a and b, every interval of a lying before every interval of b.
func (t *freeTree) merge(a, b int32) int32 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	case t.n(a).prio > t.n(b).prio:
		t.n(a).right = t.merge(t.n(a).right, b)
		t.update(a)
		return a
	default:
		t.n(b).left = t.merge(a, t.n(b).left)
		t.update(b)
		return b
	}
}

func (t *freeTree) insert(lo, hi uint128) {
	t.root = t.insertAt(t.root, t.alloc(lo, hi))
}

func (t *freeTree) insertAt(x, n int32) int32 {
	if x == 0 {
		return n
	}
	if t.n(n).prio > t.n(x).prio {
		l, r := t.split(x, t.n(n).lo)
		t.n(n).left, t.n(n).right = l, r
		t.update(n)
		return n
	}
	if t.n(n).lo.less(t.n(x).lo) {
		t.n(x).left = t.insertAt(t.n(x).left, n)
	} else {
		t.n(x).right = t.insertAt(t.n(x).right, n)
	}
	t.update(x)
	return x
}

// remove deletes the interval starting at lo, which must exist.
func (t *freeTree) remove(lo uint128) {
	t.root = t.removeAt(t.root, lo)
}

func (t *freeTree) removeAt(x int32, lo uint128) int32 {
	n := t.n(x)
	switch c := lo.cmp(n.lo); {
	case c < 0:
		n.left = t.removeAt(n.left, lo)
	case c > 0:
		n.right = t.removeAt(n.right, lo)
	default:
		t.spare = append(t.spare, x)
		return t.merge(n.left, n.right)
	}
	t.update(x)
	return x
}

// find returns the node holding k, or 0, and leaves the way there in t.path.
func (t *freeTree) find(k uint128) int32 {
	t.path = t.path[:0]
	for x := t.root; x != 0; {
		t.path = append(t.path, x)
		n := t.n(x)
		switch {
		case k.less(n.lo):
			x = n.left
		case n.hi.less(k):
			x = n.right
		default:
			return x
		}
	}
	return 0
}

// grow adds d to the sums along t.path, after the last node of it grew by d.
func (t *freeTree) grow(d uint128) {
	for _, x := range t.path {
		t.n(x).sum = t.n(x).sum.add(d)
	}
}

func (t *freeTree) shrink(d uint128) {
	for _, x := range t.path {
		t.n(x).sum = t.n(x).sum.sub(d)
	}
}

// contains reports whether k is free.
func (t *freeTree) contains(k uint128) bool { return t.find(k) != 0 }

// take marks the free address k used; it reports false when k is not free.
func (t *freeTree) take(k uint128) bool {
	x := t.find(k)
	if x == 0 {
		return false
	}
	t.takeAt(x, k)
	return true
}

// takeAt marks k used, k being in node x and t.path leading to x.
func (t *freeTree) takeAt(x int32, k uint128) {
	n := t.n(x)
	switch {
	case n.lo == n.hi:
		t.remove(n.lo)
	case k == n.lo:
		n.lo = n.lo.inc()
		t.shrink(u64(1))
	case k == n.hi:
		n.hi = n.hi.dec()
		t.shrink(u64(1))
	default:
		hi := n.hi
		n.hi = k.dec()
		t.shrink(span(k, hi))
		t.insert(k.inc(), hi)
	}
}

// put marks k free again; k must be used. It joins k to the free neighbours so that the
// tree holds one node per run of free addresses, however often k is recycled.
func (t *freeTree) put(k uint128) {
	p, s := t.neighbours(k)
	joinP := p != 0 && t.n(p).hi.inc() == k
	joinS := s != 0 && t.n(s).lo == k.inc()
	switch {
	case joinP && joinS:
		plo, shi, ssum := t.n(p).lo, t.n(s).hi, span(t.n(s).lo, t.n(s).hi)
		t.remove(t.n(s).lo)
		x := t.find(plo)
		t.n(x).hi = shi
		t.grow(ssum.inc())
	case joinP:
		x := t.find(t.n(p).lo)
		t.n(x).hi = k
		t.grow(u64(1))
	case joinS:
		x := t.find(t.n(s).lo)
		t.n(x).lo = k
		t.grow(u64(1))
	default:
		t.insert(k, k)
	}
}

// neighbours returns the free intervals just before and just after the used address k.
func (t *freeTree) neighbours(k uint128) (pred, succ int32) {
	for x := t.root; x != 0; {
		n := t.n(x)
		if n.lo.less(k) {
			pred, x = x, n.right
		} else {
			succ, x = x, n.left
		}
	}
	return pred, succ
}

// firstFrom returns the lowest free address at or above k.
func (t *freeTree) firstFrom(k uint128) (uint128, bool) {
	var best uint128
	found := false
	for x := t.root; x != 0; {
		n := t.n(x)
		switch {
		case n.hi.less(k):
			x = n.right
		case k.less(n.lo):
			best, found = n.lo, true
			x = n.left
		default:
			return k, true
		}
	}
	return best, found
}

// takeFirst marks the lowest free address used and returns it; the tree must not be empty.
func (t *freeTree) takeFirst() uint128 {
	t.path = t.path[:0]
	x := t.root
	for {
		t.path = append(t.path, x)
		if t.n(x).left == 0 {
			break
		}
		x = t.n(x).left
	}
	k := t.n(x).lo
	t.takeAt(x, k)
	return k
}

// takeNth marks the i-th free address in address order used and returns it; i must be
// below total().
func (t *freeTree) takeNth(i uint128) uint128 {
	t.path = t.path[:0]
	x := t.root
	for {
		t.path = append(t.path, x)
		n := t.n(x)
		l := t.n(n.left).sum
		if i.less(l) {
			x = n.left
			continue
		}
		i = i.sub(l)
		size := span(n.lo, n.hi)
		if i.less(size) {
			k := n.lo.add(i)
			t.takeAt(x, k)
			return k
		}
		i = i.sub(size)
		x = n.right
	}
}

// freeBelow returns how many addresses below k are free.
func (t *freeTree) freeBelow(k uint128) uint128 {
	var acc uint128
	for x := t.root; x != 0; {
		n := t.n(x)
		switch {
		case !n.lo.less(k):
			x = n.left
		case n.hi.less(k):
			acc = acc.add(t.n(n.left).sum).add(span(n.lo, n.hi))
			x = n.right
		default:
			return acc.add(t.n(n.left).sum).add(k.sub(n.lo))
		}
	}
	return acc
}

// freeIn returns how many addresses from lo to hi are free.
func (t *freeTree) freeIn(lo, hi uint128) uint128 {
	n := t.freeBelow(hi).sub(t.freeBelow(lo))
	if t.contains(hi) {
		n = n.inc()
	}
	return n
}

// each calls fn on the free intervals in address order until fn returns false.
func (t *freeTree) each(fn func(lo, hi uint128) bool) bool {
	return t.eachAt(t.root, fn)
}

func (t *freeTree) eachAt(x int32, fn func(lo, hi uint128) bool) bool {
	if x == 0 {
		return true
	}
	n := t.n(x)
	return t.eachAt(n.left, fn) && fn(n.lo, n.hi) && t.eachAt(n.right, fn)
}
