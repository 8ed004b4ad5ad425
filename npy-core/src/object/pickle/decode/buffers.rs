//! The machine's largest buffers, kept from one decode for the next ([`Buffers`]).

use super::budget::vec_cost;
use super::{Machine, Node, Value};
use crate::object::spare::Spare;

/// The machine's largest buffers, kept from one decode for the next: a check of 100,000
/// ragged arrays fills 40 MB of them, and growing them anew each time (fresh pages
/// faulted in, each doubling copied) took a third of its time. One set is kept, emptied,
/// when its capacity is at most [`SPARE_MAX`] bytes.
#[derive(Default)]
pub(super) struct Buffers {
    pub(super) nodes: Vec<Node>,
    pub(super) stack: Vec<Value>,
    pub(super) memo: Vec<Value>,
    pub(super) entries: Vec<(Value, Value)>,
    pub(super) tuple_items: Vec<Value>,
}

/// The most memory [`SPARE`] keeps between decodes.
pub(super) const SPARE_MAX: usize = 64 << 20;

static SPARE: Spare<Buffers> = Spare::new();

impl Buffers {
    /// The kept set, or none.
    pub(super) fn take() -> Buffers {
        SPARE.take().unwrap_or_default()
    }

    pub(super) fn bytes(&self) -> usize {
        [
            vec_cost::<Node>(self.nodes.capacity()),
            vec_cost::<Value>(self.stack.capacity()),
            vec_cost::<Value>(self.memo.capacity()),
            vec_cost::<(Value, Value)>(self.entries.capacity()),
            vec_cost::<Value>(self.tuple_items.capacity()),
        ]
        .iter()
        .fold(0, |a, &b| a.saturating_add(b))
    }

    /// Keeps these (emptied) for the next decode, unless too big or one set is kept.
    fn keep(mut self) {
        self.nodes.clear();
        if self.bytes() <= SPARE_MAX {
            SPARE.keep(self);
        }
    }
}

impl<R> Drop for Machine<R> {
    fn drop(&mut self) {
        Buffers {
            nodes: self.nodes.take(),
            stack: self.stack.take(),
            memo: self.memo.take(),
            entries: self.entries.take(),
            tuple_items: self.tuple_items.take(),
        }
        .keep();
    }
}
