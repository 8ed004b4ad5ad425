//! Containers as opcodes fill them: lists and dicts from the stack in place, tuples, and
//! what a check keeps of them (a dict's entries and a tuple's items in shared arenas, a
//! list's [`Strings`]).

use super::budget::{reserve, vec_cost};
use super::{Kind, Machine, PickleInput, Value};
use crate::error::Result;
use crate::object::pickle::opcode_name;

/// What a check keeps of a list's values for a `StringDType` array, whose values must be
/// strs or its `na_object` (None, a float, or a str): flags, and the bits of the first
/// float.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Strings {
    flags: u8,
    first_float: u64,
}

impl Strings {
    /// A None among the values.
    const NONE: u8 = 1;
    /// A value that is no str, None or float.
    const OTHER: u8 = 2;
    /// A float among the values.
    const FLOAT: u8 = 4;
    /// Every float is NaN.
    const ALL_NAN: u8 = 8;
    /// Every float has the bits of the first.
    const ALL_SAME: u8 = 16;

    pub(super) fn add(&mut self, v: Value, is_str: bool) {
        match v {
            _ if is_str => {}
            Value::None => self.flags |= Self::NONE,
            Value::Float(x) if self.flags & Self::FLOAT == 0 => {
                self.first_float = x.to_bits();
                self.flags |= Self::FLOAT | Self::ALL_SAME | if x.is_nan() { Self::ALL_NAN } else { 0 };
            }
            Value::Float(x) => {
                if !x.is_nan() {
                    self.flags &= !Self::ALL_NAN;
                }
                if x.to_bits() != self.first_float {
                    self.flags &= !Self::ALL_SAME;
                }
            }
            _ => self.flags |= Self::OTHER,
        }
    }

    /// Whether every value is a str or `na` (the dtype's missing value, if it has one;
    /// `na_is_str` when it is a str), as `check_strings` decides value by value.
    pub(super) fn all_strs_or(self, na: Option<Value>, na_is_str: bool) -> bool {
        let has = |flag: u8| self.flags & flag != 0;
        if has(Self::OTHER) {
            return false;
        }
        match na {
            Some(Value::None) if !na_is_str => !has(Self::FLOAT),
            Some(Value::Float(y)) => {
                let floats_match = !has(Self::FLOAT)
                    || (y.is_nan() && has(Self::ALL_NAN))
                    || (has(Self::ALL_SAME) && self.first_float == y.to_bits());
                !has(Self::NONE) && floats_match
            }
            _ => !has(Self::NONE) && !has(Self::FLOAT),
        }
    }
}

impl<R: PickleInput> Machine<R> {
    /// Whether a value can be a dict key (Python refuses lists and dicts, and tuples
    /// holding them).
    pub(super) fn hashable(&self, v: Value) -> bool {
        match self.kind(v) {
            Some(
                Kind::List(_)
                | Kind::ListOf { .. }
                | Kind::Dict(_)
                | Kind::DictAt { .. }
                | Kind::DictOf { .. }
                | Kind::Mapping { .. }
                | Kind::Slice(_)
                | Kind::Deque(_)
                | Kind::Masked(_)
                | Kind::Array(_),
            ) => false,
            Some(Kind::Set(set)) => set.frozen,
            Some(Kind::Leaf(obj)) => !matches!(**obj, crate::object::Object::ByteArray(_)),
            Some(Kind::Tuple { hashable, .. } | Kind::TupleAt { hashable, .. }) => *hashable,
            _ => true,
        }
    }

    /// Replaces the values `self.stack[from..]` by a tuple of them: for a check, a run of
    /// `tuple_items`, else with a buffer of its own (decoding moves it into the value).
    pub(super) fn tuple(&mut self, from: usize, at: u64) -> Result<()> {
        let items = &self.stack[from..];
        let hashable = items.iter().all(|&v| self.hashable(v));
        let n = items.len();
        let in_arena = self.input.reader.whole().is_some() && u32::try_from(self.tuple_items.len() + n).is_ok();
        let kind = if in_arena {
            if !reserve(&mut self.tuple_items, n, &mut self.budget, self.input.pos) {
                return Err(self.over(at));
            }
            let start = self.tuple_items.len() as u32;
            self.tuple_items.extend_from_slice(&self.stack[from..]);
            Kind::TupleAt { start, len: n as u32, hashable }
        } else {
            self.charge(vec_cost::<Value>(n), at)?;
            Kind::Tuple { items: self.stack[from..].to_vec(), hashable }
        };
        let tuple = self.node(kind, at)?;
        self.stack.truncate(from);
        self.push(tuple, at)
    }

    /// The items of a tuple.
    pub(super) fn tuple_items(&self, v: Value) -> Option<&[Value]> {
        match self.kind(v)? {
            Kind::Tuple { items, .. } => Some(items),
            &Kind::TupleAt { start, len, .. } => self.tuple_items.get(start as usize..start as usize + len as usize),
            _ => None,
        }
    }

    /// Moves the values above stack index `from` into the container just below them, the
    /// list or dict `want` (a dict takes them as key, value, key, value, ...), in place.
    pub(super) fn fill(&mut self, from: usize, want: &str, at: u64, op: u8) -> Result<()> {
        if from <= self.frame_start() || from > self.stack.len() {
            let name = opcode_name(op).unwrap_or("?");
            return Err(self.err(at, format!("{name} needs an object on the stack, but it is empty (or at a MARK)")));
        }
        let target = self.stack[from - 1];
        let i = match (target, self.kind(target)) {
            (Value::Node(i), Some(Kind::List(_) | Kind::ListOf { .. } | Kind::Deque(_))) if want == "list" => {
                i as usize
            }
            (
                Value::Node(i),
                Some(Kind::Dict(_) | Kind::DictAt { .. } | Kind::DictOf { .. } | Kind::Mapping { .. }),
            ) if want == "dict" => i as usize,
            _ => {
                let name = opcode_name(op).unwrap_or("?");
                return Err(self.err(at, format!("{name} on a {}, not a {want}", self.type_name(target))));
            }
        };
        let items = &self.stack[from..];
        if want == "dict" {
            if !items.len().is_multiple_of(2) {
                let name = opcode_name(op).unwrap_or("?");
                return Err(self.err(at, format!("{name} with an odd number of items")));
            }
            if let Some(&key) = items.iter().step_by(2).find(|&&key| !self.hashable(key)) {
                return Err(
                    self.err(at, format!("a dict key of type {}, which Python cannot hash", self.type_name(key)))
                );
            }
        }
        let depth = self.depth_around(usize::from(self.nodes[i].depth()), items, at)?;
        let n = self.stack.len() - from;
        match self.nodes[i].kind {
            Kind::DictAt { start, len } => self.fill_dict_at(i, start, len, from, at)?,
            Kind::DictOf { len } => self.nodes[i].kind = Kind::DictOf { len: len + n / 2 },
            Kind::ListOf { len, mut strings } => {
                for &v in &self.stack[from..] {
                    strings.add(v, self.is_str(v));
                }
                self.nodes[i].kind = Kind::ListOf { len: len + n, strings };
            }
            _ => {}
        }
        if matches!(self.nodes[i].kind, Kind::DictAt { .. } | Kind::DictOf { .. } | Kind::ListOf { .. }) {
            self.nodes[i].set_depth(depth);
            self.stack.truncate(from);
            return Ok(());
        }
        let (pos, items) = (self.input.pos, &self.stack[from..]);
        let reserved = match &mut self.nodes[i].kind {
            Kind::Deque(deque) => {
                let (list, maxlen) = &mut **deque;
                if maxlen.is_some_and(|max| (list.len() + items.len()) as u64 > max) {
                    let max = maxlen.unwrap_or_default();
                    return Err(self.err(at, format!("a collections.deque of maxlen {max} given more items")));
                }
                let ok = reserve(list, items.len(), &mut self.budget, pos);
                if ok {
                    list.extend_from_slice(items);
                }
                ok
            }
            Kind::List(list) => {
                let ok = reserve(list, items.len(), &mut self.budget, pos);
                if ok {
                    list.extend_from_slice(items);
                }
                ok
            }
            Kind::Dict(entries) | Kind::Mapping { entries, .. } => {
                let ok = reserve(entries, items.len() / 2, &mut self.budget, pos);
                if ok {
                    entries.extend(items.chunks_exact(2).map(|kv| (kv[0], kv[1])));
                }
                ok
            }
            _ => unreachable!("matched above"),
        };
        if !reserved {
            return Err(self.over(at));
        }
        self.nodes[i].set_depth(depth);
        self.stack.truncate(from);
        Ok(())
    }

    /// Adds the key, value pairs `self.stack[from..]` to the [`Kind::DictAt`] node `i`
    /// (its entries `start..start + len`): in place when they end `entries` (or it has
    /// none), else into a buffer of its own (a dict filled again after another one).
    pub(super) fn fill_dict_at(&mut self, i: usize, start: u32, len: u32, from: usize, at: u64) -> Result<()> {
        let (start, len) = (start as usize, len as usize);
        let n = (self.stack.len() - from) / 2;
        let tuple = |v: Value| matches!(self.kind(v), Some(Kind::Tuple { .. } | Kind::TupleAt { .. }));
        // Dicts of at most two entries are kept whole too: a `uuid.UUID`'s state.
        if len + n > 2 && !self.stack[from..].chunks_exact(2).all(|kv| tuple(kv[1])) {
            self.nodes[i].kind = Kind::DictOf { len: len + n };
            return Ok(());
        }
        let pairs = |stack: &[Value]| stack[from..].chunks_exact(2).map(|kv| (kv[0], kv[1])).collect::<Vec<_>>();
        let at_end = len == 0 || start + len == self.entries.len();
        let fits = u32::try_from(self.entries.len() + n).is_ok();
        if at_end && fits {
            if !reserve(&mut self.entries, n, &mut self.budget, self.input.pos) {
                return Err(self.over(at));
            }
            let start = if len == 0 { self.entries.len() } else { start };
            let stack = &self.stack;
            self.entries.extend(stack[from..].chunks_exact(2).map(|kv| (kv[0], kv[1])));
            // Both fit: checked above.
            self.nodes[i].kind = Kind::DictAt { start: start as u32, len: (len + n) as u32 };
            return Ok(());
        }
        let mut own = Vec::new();
        if !reserve(&mut own, len + n, &mut self.budget, self.input.pos) {
            return Err(self.over(at));
        }
        own.extend_from_slice(&self.entries[start..start + len]);
        own.extend(pairs(&self.stack));
        self.nodes[i].kind = Kind::Dict(own);
        Ok(())
    }

    /// The entries of a dict (`None` for a [`Kind::DictOf`], which keeps none).
    pub(super) fn dict_entries(&self, v: Value) -> Option<&[(Value, Value)]> {
        match self.kind(v)? {
            Kind::Dict(entries) => Some(entries),
            &Kind::DictAt { start, len } => self.entries.get(start as usize..start as usize + len as usize),
            _ => None,
        }
    }

    /// The number of entries of a dict.
    pub(super) fn dict_len(&self, v: Value) -> Option<usize> {
        match self.kind(v)? {
            Kind::Dict(entries) => Some(entries.len()),
            &Kind::DictAt { len, .. } => Some(len as usize),
            &Kind::DictOf { len } => Some(len),
            _ => None,
        }
    }

    /// An empty dict: one of the machine's `entries` for a check, else with a buffer of
    /// its own (decoding moves it into the value).
    pub(super) fn empty_dict(&self) -> Kind {
        if self.input.reader.whole().is_some() {
            Kind::DictAt { start: 0, len: 0 }
        } else {
            Kind::Dict(Vec::new())
        }
    }

    /// The stack index of the first of the top `n` values (for `APPEND`, `SETITEM`).
    pub(super) fn top_values(&self, n: usize, at: u64, op: u8) -> Result<usize> {
        if self.stack.len() < self.frame_start() + n {
            let name = opcode_name(op).unwrap_or("?");
            return Err(self.err(at, format!("{name} needs a value, but the stack is empty (or at a MARK)")));
        }
        Ok(self.stack.len() - n)
    }

    /// The stack index of the innermost `MARK`, popped (for `APPENDS`, `SETITEMS`).
    pub(super) fn end_mark(&mut self, at: u64, op: u8) -> Result<usize> {
        self.marks.pop().ok_or_else(|| {
            let name = opcode_name(op).unwrap_or("?");
            self.err(at, format!("{name} without a MARK"))
        })
    }
}
