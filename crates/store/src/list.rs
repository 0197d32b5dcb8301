//! The replacement order of a fixed set of items numbered `0..n`: a doubly linked list by
//! index, kept beside the items (head = newest or most recently used, tail = next victim).
//! Used for the L2 extents, the 2-LRU key filter and the L1 chunk slots of the tier simulator
//! in the `lab` crate.

/// No item.
pub const NIL: u32 = u32::MAX;

/// Items in replacement order.
#[derive(Debug, Clone)]
pub struct Order {
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    tail: u32,
}

impl Order {
    /// An empty order with room reserved for `capacity` items.
    pub fn with_capacity(capacity: usize) -> Self {
        Order {
            prev: Vec::with_capacity(capacity),
            next: Vec::with_capacity(capacity),
            head: NIL,
            tail: NIL,
        }
    }

    /// Makes items `0..n` known (unlinked) if they are not yet.
    pub fn grow_to(&mut self, n: usize) {
        if self.prev.len() < n {
            self.prev.resize(n, NIL);
            self.next.resize(n, NIL);
        }
    }

    /// Writes every page of the memory the order reserved (its items' links and the room for
    /// more), so that linking items later takes no page fault.
    pub fn prefault(&mut self) {
        for v in [&mut self.prev, &mut self.next] {
            engine::table::mem::touch_slice(v);
            engine::table::mem::touch_spare(v);
        }
    }

    /// The next victim, or [`NIL`].
    pub fn tail(&self) -> u32 {
        self.tail
    }

    /// The item after `i` towards the head, or [`NIL`].
    pub fn prev(&self, i: u32) -> u32 {
        self.prev[i as usize]
    }

    /// Forgets every link (the items stay known).
    pub fn clear(&mut self) {
        self.prev.fill(NIL);
        self.next.fill(NIL);
        self.head = NIL;
        self.tail = NIL;
    }

    /// Takes linked item `i` out of the order.
    pub fn unlink(&mut self, i: u32) {
        let (p, n) = (self.prev[i as usize], self.next[i as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    /// Puts unlinked item `i` at the head.
    pub fn push_head(&mut self, i: u32) {
        self.prev[i as usize] = NIL;
        self.next[i as usize] = self.head;
        if self.head == NIL {
            self.tail = i;
        } else {
            self.prev[self.head as usize] = i;
        }
        self.head = i;
    }

    /// The items from the tail to the head.
    pub fn tail_to_head(&self) -> impl Iterator<Item = u32> + '_ {
        let mut i = self.tail;
        core::iter::from_fn(move || {
            let cur = i;
            (cur != NIL).then(|| {
                i = self.prev[cur as usize];
                cur
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_follows_pushes_and_unlinks() {
        let mut o = Order::with_capacity(4);
        o.grow_to(4);
        for i in 0..4 {
            o.push_head(i);
        }
        assert_eq!(o.tail_to_head().collect::<Vec<_>>(), [0, 1, 2, 3]);
        o.unlink(0); // the tail
        o.unlink(2); // the middle
        o.push_head(0);
        assert_eq!(o.tail_to_head().collect::<Vec<_>>(), [1, 3, 0]);
        o.unlink(0); // the head
        assert_eq!(o.tail_to_head().collect::<Vec<_>>(), [1, 3]);
        assert_eq!((o.tail(), o.prev(1)), (1, 3));
        o.clear();
        assert_eq!(o.tail_to_head().count(), 0);
    }
}
