package robust

// osTree is an order-statistic AVL tree over a fixed pool of nodes: node i
// holds the value of slot i of StreamingScale's ring, so the pool is allocated
// once and insert/remove never allocate. Keys are (value, node index): the
// index breaks ties between equal values, so every key is unique and the node
// to remove is found by search. Each node keeps its subtree size for kth and
// countLE. Height ≤ 1.44·log₂(n+2), so every operation is O(log n) worst
// case; the recursion depth is that height.
//
// Values are finite, so < is a total preorder (−0 and +0 compare equal and
// are ordered by index, which does not change any order statistic's value
// under ==).
type osTree struct {
	nodes []node
	root  int32
}

type node struct {
	val         float64
	left, right int32
	size        int32
	height      int32
}

const nilNode int32 = -1

func newOSTree(capacity int) osTree {
	return osTree{nodes: make([]node, capacity), root: nilNode}
}

func (t *osTree) reset() { t.root = nilNode }

func (t *osTree) count() int { return int(t.size(t.root)) }

func (t *osTree) size(i int32) int32 {
	if i == nilNode {
		return 0
	}
	return t.nodes[i].size
}

func (t *osTree) height(i int32) int32 {
	if i == nilNode {
		return 0
	}
	return t.nodes[i].height
}

// less orders nodes by (value, index).
func (t *osTree) less(a, b int32) bool {
	va, vb := t.nodes[a].val, t.nodes[b].val
	if va != vb {
		return va < vb
	}
	return a < b
}

func (t *osTree) fix(i int32) {
	n := &t.nodes[i]
	n.size = t.size(n.left) + t.size(n.right) + 1
	n.height = max(t.height(n.left), t.height(n.right)) + 1
}

func (t *osTree) rotateLeft(i int32) int32 {
	r := t.nodes[i].right
	t.nodes[i].right = t.nodes[r].left
	t.nodes[r].left = i
	t.fix(i)
	t.fix(r)
	return r
}

func (t *osTree) rotateRight(i int32) int32 {
	l := t.nodes[i].left
	t.nodes[i].left = t.nodes[l].right
	t.nodes[l].right = i
	t.fix(i)
	t.fix(l)
	return l
}

// balance restores the AVL property at i (children already balanced, heights
// differing by at most 2) and returns the subtree's new root.
func (t *osTree) balance(i int32) int32 {
	t.fix(i)
	n := &t.nodes[i]
	switch bf := t.height(n.left) - t.height(n.right); {
	case bf > 1:
		l := n.left
		if t.height(t.nodes[l].left) < t.height(t.nodes[l].right) {
			n.left = t.rotateLeft(l)
		}
		return t.rotateRight(i)
	case bf < -1:
		r := n.right
		if t.height(t.nodes[r].right) < t.height(t.nodes[r].left) {
			n.right = t.rotateRight(r)
		}
		return t.rotateLeft(i)
	}
	return i
}

// insert links node x (its val set) into the tree.
func (t *osTree) insert(x int32) {
	n := &t.nodes[x]
	n.left, n.right, n.size, n.height = nilNode, nilNode, 1, 1
	t.root = t.insertAt(t.root, x)
}

func (t *osTree) insertAt(i, x int32) int32 {
	if i == nilNode {
		return x
	}
	if t.less(x, i) {
		t.nodes[i].left = t.insertAt(t.nodes[i].left, x)
	} else {
		t.nodes[i].right = t.insertAt(t.nodes[i].right, x)
	}
	return t.balance(i)
}

// remove unlinks node x, which must be in the tree.
func (t *osTree) remove(x int32) { t.root = t.removeAt(t.root, x) }

func (t *osTree) removeAt(i, x int32) int32 {
	if i == x {
		n := t.nodes[i]
		if n.left == nilNode {
			return n.right
		}
		if n.right == nilNode {
			return n.left
		}
		// Replace i by its in-order successor m.
		var m int32
		right := t.removeMin(n.right, &m)
		t.nodes[m].left, t.nodes[m].right = n.left, right
		return t.balance(m)
	}
	if t.less(x, i) {
		t.nodes[i].left = t.removeAt(t.nodes[i].left, x)
	} else {
		t.nodes[i].right = t.removeAt(t.nodes[i].right, x)
	}
	return t.balance(i)
}

// removeMin unlinks the smallest node of subtree i, stores it in *m and
// returns the subtree's new root.
func (t *osTree) removeMin(i int32, m *int32) int32 {
	if t.nodes[i].left == nilNode {
		*m = i
		return t.nodes[i].right
	}
	t.nodes[i].left = t.removeMin(t.nodes[i].left, m)
	return t.balance(i)
}

// kth returns the k-th smallest value, 0 ≤ k < count().
func (t *osTree) kth(k int) float64 {
	i, k32 := t.root, int32(k)
	for {
		n := &t.nodes[i]
		ls := t.size(n.left)
		switch {
		case k32 < ls:
			i = n.left
		case k32 == ls:
			return n.val
		default:
			k32 -= ls + 1
			i = n.right
		}
	}
}

// countLE returns the number of values ≤ v.
func (t *osTree) countLE(v float64) int {
	c := int32(0)
	for i := t.root; i != nilNode; {
		n := &t.nodes[i]
		if n.val <= v {
			c += t.size(n.left) + 1
			i = n.right
		} else {
			i = n.left
		}
	}
	return int(c)
}
