//! Decoding: the pickle machine, from the input's bytes to the array's [`Object`]s.

mod budget;
mod buffers;
mod dict;
mod dtype;
mod fill;
mod input;
mod objects;
mod reconstruct;
mod stdlib;
mod text;

use std::collections::HashMap;

use self::fill::Strings;
#[cfg(not(target_family = "wasm"))]
pub(crate) use self::input::Growing;
use self::input::Input;
pub(crate) use self::input::{InMemory, PickleInput, Sparse, Stream};
use self::text::{parse_float, quote, raw_unicode_escape};
pub(crate) use reconstruct::{mask_dtype, GLOBALS};
use std::io::Read;

use self::budget::{alloc_cost, reserve, table_cost, vec_cost, Budget, Kept};
use self::buffers::Buffers;
pub(crate) use self::dict::{decode_dict, Item};
use self::reconstruct::{ArrayState, Global};
use self::stdlib::Mapping;
use super::{
    opcode_name, ADDITEMS, APPEND, APPENDS, BINBYTES, BINBYTES8, BINFLOAT, BINGET, BININT, BININT1, BININT2, BINPUT,
    BINSTRING, BINUNICODE, BINUNICODE8, BUILD, BYTEARRAY8, DICT, EMPTY_DICT, EMPTY_LIST, EMPTY_SET, EMPTY_TUPLE, FLOAT,
    FRAME, FROZENSET, GET, GLOBAL, INT, LIST, LONG, LONG1, LONG4, LONG_BINGET, LONG_BINPUT, MARK, MEMOIZE, NEWFALSE,
    NEWOBJ, NEWTRUE, NONE, POP, POP_MARK, PROTO, PUT, REDUCE, SETITEM, SETITEMS, SHORT_BINBYTES, SHORT_BINSTRING,
    SHORT_BINUNICODE, STACK_GLOBAL, STOP, TUPLE, TUPLE1, TUPLE2, TUPLE3, UNICODE,
};
use crate::error::{Error, Result};
use crate::object::bigint::{self, Int, MAX_INT_DIGITS, MAX_LONG_BYTES};
use crate::object::{CheckProgress, Object, MAX_DEPTH};
use crate::options::Python2Strings;

/// Why a known opcode is refused.
fn refusal(op: u8) -> &'static str {
    match op {
        b'P' | b'Q' => "persistent ids call back into the loader",
        b'i' | b'o' | 0x92 => "it creates an instance of a class",
        0x82..=0x84 => "the extension registry names arbitrary classes",
        0x97 | 0x98 => "out-of-band buffers are not among the supported values",
        b'S' => "protocol 0 string literals are not supported",
        b'2' => "NumPy never writes it",
        _ => "it is not supported",
    }
}

// ---------------------------------------------------------------------------------------
// Limits.

/// Longest text argument of a `GLOBAL`, `PUT` or `GET` opcode.
const MAX_NAME_LINE: usize = 256;
/// Longest `FLOAT` text argument.
const MAX_FLOAT_LINE: usize = 1024;
/// Deepest container while decoding: an element's [`MAX_DEPTH`] levels, the ndarray's list
/// around them and the `BUILD` state tuple around that.
const MAX_NODE_DEPTH: usize = MAX_DEPTH + 2;

// ---------------------------------------------------------------------------------------
// The machine's values.

/// A value on the stack or in the memo: a scalar, or an index into the arena.
#[derive(Debug, Clone, Copy)]
enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Node(u32),
    /// A str of an input in memory, by its offset and length: the check builds no values,
    /// so it copies no text and makes no node.
    StrAt {
        start: u32,
        len: u32,
    },
    /// A bytes of an input in memory, as [`Value::StrAt`]: the check copies no data (an
    /// array's raw bytes, as `np.save` of a dict of arrays holds, can be most of a file).
    BytesAt {
        start: u32,
        len: u32,
    },
    /// A bytes of a sparse input whose content was left out (a gap): only its length is
    /// known. [`Machine::bytes_of`] gives nothing for it and marks the gap wanted, so a
    /// check that looks at its content cannot pass; its type and length are known
    /// ([`Machine::is_bytes`], [`Machine::bytes_len`]).
    BytesOut {
        len: u64,
    },
}

/// An arena entry: the offset of the opcode that made it (for messages) and, for a list,
/// tuple or dict, the levels of containers in it (1 for one holding no container) as far as
/// the machine knows: a list filled after it was put in another does not update the other,
/// so this can be less than the truth, never more. Both share one `u64` (the offset in the
/// low 48 bits), so a node takes 40 bytes.
#[derive(Debug)]
struct Node {
    at_depth: u64,
    kind: Kind,
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Node>() == 40);

impl Node {
    fn new(at: u64, depth: u16, kind: Kind) -> Node {
        Node { at_depth: (at & AT_MASK) | (u64::from(depth) << 48), kind }
    }

    fn at(&self) -> u64 {
        self.at_depth & AT_MASK
    }

    fn depth(&self) -> u16 {
        (self.at_depth >> 48) as u16
    }

    fn set_depth(&mut self, depth: u16) {
        self.at_depth = self.at() | (u64::from(depth) << 48);
    }
}

/// The offset bits of [`Node::at_depth`] (offsets past 256 TiB wrap in messages).
const AT_MASK: u64 = (1 << 48) - 1;

#[derive(Debug)]
enum Kind {
    Str(String),
    Bytes(Vec<u8>),
    BigInt(String),
    Complex(f64, f64),
    List(Vec<Value>),
    Tuple {
        items: Vec<Value>,
        hashable: bool,
    },
    /// A tuple of a check, its items `start..start + len` of the machine's `tuple_items`
    /// (tuples never change, so each is one run of them).
    TupleAt {
        start: u32,
        len: u32,
        hashable: bool,
    },
    Dict(Vec<(Value, Value)>),
    /// A dict of a check, its entries `start..start + len` of the machine's `entries`: no
    /// buffer of its own while it is filled in one go (as pickles fill small dicts).
    DictAt {
        start: u32,
        len: u32,
    },
    /// A list of a check: its length and what a `StringDType` array needs to know of its
    /// values ([`Strings`]). Lists are read only as an array's values, and only a
    /// `StringDType` array's (strs and its missing value) are looked at one by one.
    ListOf {
        len: usize,
        strings: Strings,
    },
    /// A dict of a check holding a value that is not a tuple: only its length is kept.
    /// Dicts are read only as a dtype's fields (`name: (dtype, offset[, title])`, which
    /// [`Self::record`](Machine::record) refuses for any other value) or metadata (empty).
    DictOf {
        len: usize,
    },
    Global(Global),
    /// `numpy.dtype(descr, align, copy)`, then its `BUILD`.
    Dtype(Box<dtype::DtypeNode>),
    /// NumPy 2's `StringDType` (`_convert_to_stringdtype_kwargs(coerce[, na_object])`):
    /// its `coerce` flag, and its `na_object` if it has one.
    StringDtype {
        coerce: bool,
        na: Option<Value>,
    },
    /// `_reconstruct(ndarray, ...)`, with its state once built.
    Array(Option<Box<ArrayState>>),
    /// A value built whole by its `REDUCE` (a date, a `Decimal`, a NumPy `datetime64`
    /// scalar, a `bytearray`...): nothing in it is a value of the machine's.
    Leaf(Box<Object>),
    /// A `set` or `frozenset` and its items.
    Set(Box<stdlib::SetNode>),
    /// A `collections.OrderedDict` or `defaultdict` (filled by `SETITEMS`) or `Counter`
    /// (from a dict).
    Mapping {
        entries: Vec<(Value, Value)>,
        of: Mapping,
    },
    /// A `collections.deque` (filled by `APPENDS`) and its `maxlen`.
    Deque(Box<(Vec<Value>, Option<u64>)>),
    /// `getattr(zoneinfo.ZoneInfo, '_unpickle')`, the method a `ZoneInfo` pickles by.
    ZoneUnpickle,
    /// `numpy.ma.core._mareconstruct(MaskedArray, ndarray, (0,), 'b')`, with its state
    /// once built.
    Masked(Option<Box<reconstruct::MaskedState>>),
    /// `slice(start, stop, step)`.
    Slice(Box<[Value; 3]>),
    /// A `uuid.UUID` made by `NEWOBJ`, before its `BUILD`.
    NewUuid,
    /// A `uuid.SafeUUID` member, only ever a UUID's `is_safe`.
    SafeUuid,
    /// An instance of one of the caller's safe globals (by index), made by `REDUCE` or
    /// `NEWOBJ` and maybe `BUILD`: only a check passes it, for an unpickler that may run
    /// that class's code.
    Safe(u16),
}

/// An object array decoded from its pickle: shape, order flag, and values in C order (the
/// order NumPy's pickle lists them, whatever the array's order).
#[derive(Debug)]
pub(crate) struct Decoded {
    pub(crate) shape: Vec<usize>,
    pub(crate) fortran: bool,
    pub(crate) items: Vec<Object>,
    /// The array's `StringDType`, when it is one rather than an object array.
    pub(crate) string_dtype: Option<crate::object::StringDType>,
    /// File offset of the pickle, for messages about the array as a whole.
    pub(crate) at: u64,
}

/// How a pickle is decoded: the memory budget (`max_bytes` fixed, or `None` for the
/// default of 128 MiB plus 4 bytes per pickle byte), what Python 2 `str`s become, and the
/// caller's own classes a check lets through ([`crate::ReadOptions::safe_globals`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub(crate) max_bytes: Option<usize>,
    pub(crate) strings: Python2Strings,
    /// Boxed, and `None` when empty: readers hold these settings, and most name none.
    pub(crate) safe_globals: Option<Box<[(String, String)]>>,
}

impl Settings {
    /// The settings `options` give.
    pub(crate) fn of(options: &crate::options::ReadOptions) -> Settings {
        Settings {
            max_bytes: options.object_limit(),
            strings: options.strings(),
            safe_globals: match options.safe_global_names() {
                [] => None,
                names => Some(names.into()),
            },
        }
    }

    /// The default settings with a fixed budget of `max_bytes`.
    #[cfg(test)]
    pub(crate) fn limit(max_bytes: usize) -> Settings {
        Settings { max_bytes: Some(max_bytes), ..Settings::default() }
    }
}

/// How often a check reports progress, in bytes of input at least.
pub(crate) const PROGRESS_EVERY: u64 = 64 << 10;

/// Decodes the pickle of an object array from `reader`, whose first byte is at file
/// offset `base`. With `whole` (the length of the source), the reader holds just this
/// pickle: bytes after `STOP` are an error, and longer claims fail before reading;
/// otherwise reading stops right after `STOP`.
///
/// # Errors
/// [`crate::ErrorKind::Pickle`] for anything but an object array of plain values, a
/// truncated or malformed pickle, or one over the budget; [`crate::ErrorKind::Io`] from
/// the reader.
pub(crate) fn decode<R: Read>(reader: R, base: u64, whole: Option<u64>, settings: Settings) -> Result<Decoded> {
    let mut machine = Machine::new(Stream(reader), base, whole, settings);
    let stop = machine.run(&mut |_| true)?;
    let decoded = machine.finish(stop)?;
    machine.end()?;
    Ok(decoded)
}

/// Checks that `bytes` (whose first byte is at file offset `base`) hold a pickle [`decode`]
/// accepts (an object array of plain values, nothing else), without building its values,
/// and gives its array's shape and the pickle's length: for a caller that has another
/// unpickler build them (one that can name only [`GLOBALS`], once this said yes). With
/// `whole`, the pickle must end `bytes`; otherwise bytes after its `STOP` are not read.
///
/// `progress` hears of it as [`CheckProgress`] says; it returns `false` to stop the check
/// (an error).
///
/// # Errors
/// As [`decode`]; a stop asked for by `progress`.
pub(crate) fn check(
    bytes: &[u8],
    base: u64,
    settings: Settings,
    whole: bool,
    progress: &mut dyn FnMut(CheckProgress<'_>) -> bool,
) -> Result<(Vec<usize>, usize)> {
    let input = InMemory::new(bytes);
    let mut machine = Machine::new(input, base, whole.then_some(bytes.len() as u64), settings);
    let stop = machine.run(&mut |n| progress(CheckProgress::Checked(n as usize)))?;
    let shape = machine.finish_check(stop)?;
    machine.end()?;
    // `stop` is an offset into `bytes`, so it fits.
    let len = stop as usize + 1;
    if !progress(CheckProgress::Passed { shape: &shape, len }) {
        return Err(machine.err(stop, "the check was stopped"));
    }
    // The machine's memory is freed only now, after `Passed`.
    drop(machine);
    Ok((shape, len))
}

/// What [`check_sparse`] found: the shape and length of a pickle that passed, or that the
/// check needs the content of a payload the input left out (at this offset, or further
/// on): only a check of the whole pickle can decide.
#[derive(Debug)]
pub(crate) enum SparseChecked {
    Passed(Vec<usize>, u64),
    NeedsGap(u64),
}

/// As [`check`] (a pickle that may go on past its `STOP`), over a pickle in memory but for
/// the content of the long bytes payloads `gaps` left out of `bytes`. The machine is the
/// same, and refuses all [`check`] refuses, or says it needs a gap's content
/// ([`SparseChecked::NeedsGap`]); it passes a pickle only where [`check`] of the whole
/// pickle passes it: it looks at a gap only as the payload of the `BINBYTES` or `BINBYTES8`
/// opcode it follows, and of that payload only at its length (an ndarray's raw data,
/// whose length the check compares with its shape) unless it needs the content, which
/// stops the check before any later opcode is approved. Offsets (in errors and in
/// `progress`) count the gaps' bytes, as the pickle has them.
///
/// # Errors
/// As [`check`].
pub(crate) fn check_sparse(
    bytes: &[u8],
    gaps: &[crate::object::Gap],
    base: u64,
    settings: Settings,
    progress: &mut dyn FnMut(CheckProgress<'_>) -> bool,
) -> Result<SparseChecked> {
    check_left_out(Machine::new(Sparse::new(bytes, gaps), base, None, settings), progress)
}

/// Runs `machine`, whose input leaves payloads out, to its end (see [`check_sparse`]).
fn check_left_out<S: PickleInput>(
    mut machine: Machine<S>,
    progress: &mut dyn FnMut(CheckProgress<'_>) -> bool,
) -> Result<SparseChecked> {
    let run = machine.run(&mut |n| progress(CheckProgress::Checked(n as usize)));
    let checked = run.and_then(|stop| Ok((machine.finish_check(stop)?, stop)));
    if machine.input.reader.wanted_gap() {
        return Ok(SparseChecked::NeedsGap(machine.input.base + machine.input.pos));
    }
    let (shape, stop) = checked?;
    let len = stop + 1;
    let Ok(n) = usize::try_from(len) else { return Err(machine.err(stop, "a pickle longer than memory")) };
    if !progress(CheckProgress::Passed { shape: &shape, len: n }) {
        return Err(machine.err(stop, "the check was stopped"));
    }
    drop(machine);
    Ok(SparseChecked::Passed(shape, len))
}

/// As [`check_sparse`], over a pickle read as the check goes ([`Growing`]): the same
/// machine, which leaves out what [`check_sparse`]'s input would have left out but for
/// what was read already.
///
/// # Errors
/// As [`check`], and the reader's.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn check_growing<R: Read + std::io::Seek>(
    input: Growing<'_, R>,
    settings: Settings,
    progress: &mut dyn FnMut(CheckProgress<'_>) -> bool,
) -> Result<SparseChecked> {
    check_left_out(Machine::new(input, 0, None, settings), progress)
}

struct Machine<R> {
    input: Input<R>,
    nodes: Kept<Node>,
    stack: Kept<Value>,
    /// Stack lengths at each `MARK`.
    marks: Vec<usize>,
    /// The memo entries 0, 1, 2, ... as pickles number them.
    memo: Kept<Value>,
    /// Entries past a gap in the numbering (only indices above `memo.len()`).
    sparse: HashMap<u32, Value>,
    budget: Budget,
    strings: Python2Strings,
    /// The entries of every [`Kind::DictAt`].
    entries: Kept<(Value, Value)>,
    /// The items of every [`Kind::TupleAt`].
    tuple_items: Kept<Value>,
    /// The caller's own classes ([`Settings::safe_globals`]), by index in [`Global::Safe`].
    safe_globals: Vec<(String, String)>,
}

// The `#[inline]` hints on `charge`, `push`, `node` and `push_node`: every opcode that
// makes a value goes through them, and once `run` is cut into one step per opcode family
// LLVM keeps them out of line without the hints (callgrind, arrays of 100k ints, floats,
// strs, lists, tuples or dicts: up to 6% more instructions to decode; with them, 1 to 6%
// fewer than the single 235-line `run` took).
impl<R: PickleInput> Machine<R> {
    fn new(reader: R, base: u64, whole: Option<u64>, settings: Settings) -> Self {
        let spare = Buffers::take();
        Machine {
            input: Input { reader, pos: 0, base, len: whole },
            nodes: Kept::new(spare.nodes),
            stack: Kept::new(spare.stack),
            marks: Vec::new(),
            memo: Kept::new(spare.memo),
            sparse: HashMap::new(),
            budget: Budget { used: 0, fixed: settings.max_bytes, raisable: true },
            strings: settings.strings,
            entries: Kept::new(spare.entries),
            tuple_items: Kept::new(spare.tuple_items),
            safe_globals: settings.safe_globals.map(Vec::from).unwrap_or_default(),
        }
    }

    /// After the result: with the source's length given, nothing may follow `STOP`.
    fn end(&mut self) -> Result<()> {
        if self.input.len.is_some() {
            let at = self.input.pos;
            if self.input.byte()?.is_some() {
                return Err(self.err(at, "bytes follow the pickle's STOP: the data must end with it"));
            }
        }
        Ok(())
    }

    fn err(&self, at: u64, reason: impl Into<String>) -> Error {
        Error::pickle(self.input.base + at, reason)
    }

    /// Counts `bytes` of memory against the budget.
    #[inline]
    fn charge(&mut self, bytes: usize, at: u64) -> Result<()> {
        if self.budget.add(bytes, self.input.pos) {
            Ok(())
        } else {
            Err(self.over(at))
        }
    }

    #[cold]
    fn over(&self, at: u64) -> Error {
        self.err(at, self.budget.exceeded(self.input.pos))
    }

    /// Bytes left under a fixed budget (unbounded under the default, which grows with the
    /// input), to refuse a claimed length before reading it.
    fn room(&self) -> usize {
        self.budget.fixed.map_or(usize::MAX, |f| f.saturating_sub(self.budget.used))
    }

    fn payload(&mut self, len: u64, at: u64, op: u8) -> Result<Vec<u8>> {
        if len > self.room() as u64 {
            let name = opcode_name(op).unwrap_or("?");
            return Err(self.err(at, format!("{name} of {len} bytes: {}", self.budget.exceeded(self.input.pos))));
        }
        self.input.bytes(len, at, op)
    }

    #[inline(always)]
    fn push(&mut self, v: Value, at: u64) -> Result<()> {
        if !reserve(&mut self.stack, 1, &mut self.budget, self.input.pos) {
            return Err(self.over(at));
        }
        self.stack.push(v);
        Ok(())
    }

    /// A new arena entry. The heap buffer of a str, bytes, big int or dtype is charged
    /// here; a container's items were charged by whoever collected them.
    #[inline]
    fn node(&mut self, kind: Kind, at: u64) -> Result<Value> {
        let payload = match &kind {
            Kind::Str(s) | Kind::BigInt(s) => alloc_cost(s.capacity()),
            Kind::Bytes(b) => alloc_cost(b.capacity()),
            Kind::Dtype(_) => alloc_cost(std::mem::size_of::<dtype::DtypeNode>()),
            _ => 0,
        };
        self.charge(payload, at)?;
        let depth = match &kind {
            Kind::List(items) | Kind::Tuple { items, .. } => self.depth_around(0, items, at)?,
            &Kind::TupleAt { start, len, .. } => {
                self.depth_around(0, &self.tuple_items[start as usize..start as usize + len as usize], at)?
            }
            Kind::Dict(_) | Kind::DictAt { .. } | Kind::DictOf { .. } | Kind::ListOf { .. } => 1,
            _ => 0,
        };
        if !reserve(&mut self.nodes, 1, &mut self.budget, self.input.pos) {
            return Err(self.over(at));
        }
        let index = u32::try_from(self.nodes.len()).map_err(|_| self.err(at, "more than 2^32 values"))?;
        self.nodes.push(Node::new(at, depth, kind));
        Ok(Value::Node(index))
    }

    #[inline]
    fn push_node(&mut self, kind: Kind, at: u64) -> Result<()> {
        let v = self.node(kind, at)?;
        self.push(v, at)
    }

    /// The levels of containers in a value (0 for anything but a list, tuple or dict).
    fn depth(&self, v: Value) -> usize {
        match v {
            Value::Node(i) => self.nodes.get(i as usize).map_or(0, |n| usize::from(n.depth())),
            _ => 0,
        }
    }

    /// The depth of a container of depth `depth` once it also holds `items`: checked as
    /// the values nest, so a deep pickle stops at the level that is too deep.
    fn depth_around(&self, depth: usize, items: &[Value], at: u64) -> Result<u16> {
        let inner = items.iter().map(|&v| self.depth(v)).max().unwrap_or(0);
        let depth = depth.max(inner + 1);
        if depth > MAX_NODE_DEPTH {
            return Err(self.err(at, format!("values nested deeper than {MAX_DEPTH} levels")));
        }
        Ok(depth as u16)
    }

    fn kind(&self, v: Value) -> Option<&Kind> {
        match v {
            Value::Node(i) => self.nodes.get(i as usize).map(|n| &n.kind),
            _ => None,
        }
    }

    /// The text of a str.
    fn str_text(&self, v: Value) -> Option<&str> {
        match v {
            Value::StrAt { start, len } => {
                let whole = self.input.reader.whole()?;
                // Checked as UTF-8 when made, so this is only a lookup.
                let bytes = whole.get(start as usize..start as usize + len as usize)?;
                std::str::from_utf8(bytes).ok()
            }
            _ => match self.kind(v) {
                Some(Kind::Str(s)) => Some(s),
                _ => None,
            },
        }
    }

    /// The data of a bytes value: `None` for anything else, and for a bytes whose content
    /// a sparse input left out ([`Value::BytesOut`]), which marks its gap wanted.
    fn bytes_of(&self, v: Value) -> Option<&[u8]> {
        match v {
            Value::BytesAt { start, len } => {
                self.input.reader.whole()?.get(start as usize..start as usize + len as usize)
            }
            Value::BytesOut { .. } => {
                self.input.reader.want_gap();
                None
            }
            _ => match self.kind(v) {
                Some(Kind::Bytes(b)) => Some(b),
                _ => None,
            },
        }
    }

    /// Whether a value is a bytes (its content present or not).
    fn is_bytes(&self, v: Value) -> bool {
        self.bytes_len(v).is_some()
    }

    /// The length of a bytes value (its content present or not).
    fn bytes_len(&self, v: Value) -> Option<u64> {
        match v {
            Value::BytesAt { len, .. } => Some(u64::from(len)),
            Value::BytesOut { len } => Some(len),
            _ => match self.kind(v) {
                Some(Kind::Bytes(b)) => Some(b.len() as u64),
                _ => None,
            },
        }
    }

    /// Whether a value is a str (without looking at its text, checked when it was made).
    fn is_str(&self, v: Value) -> bool {
        matches!(v, Value::StrAt { .. }) || matches!(self.kind(v), Some(Kind::Str(_)))
    }

    /// The text of a str, or of a Python 2 `str` read as bytes (NumPy reads dtype strings
    /// either way).
    fn str_value(&self, v: Value) -> Option<&str> {
        match self.kind(v) {
            _ if self.strings == Python2Strings::Bytes && self.bytes_of(v).is_some() => {
                self.bytes_of(v).and_then(|b| std::str::from_utf8(b).ok())
            }
            _ => self.str_text(v),
        }
    }

    /// The stack's length at the innermost `MARK` (0 without one).
    fn frame_start(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    fn pop(&mut self, at: u64, op: u8) -> Result<Value> {
        if self.stack.len() <= self.frame_start() {
            let name = opcode_name(op).unwrap_or("?");
            return Err(self.err(at, format!("{name} needs a value, but the stack is empty (or at a MARK)")));
        }
        self.stack.pop().ok_or_else(|| self.err(at, "stack underflow"))
    }

    /// The values above the innermost `MARK`, in a new buffer charged to the budget.
    fn pop_mark(&mut self, at: u64, op: u8) -> Result<Vec<Value>> {
        let Some(&start) = self.marks.last() else {
            let name = opcode_name(op).unwrap_or("?");
            return Err(self.err(at, format!("{name} without a MARK")));
        };
        self.charge(vec_cost::<Value>(self.stack.len() - start), at)?;
        self.marks.pop();
        Ok(self.stack.split_off(start))
    }

    /// The top of the stack, which must be a node of the current frame.
    fn top(&self, at: u64, op: u8) -> Result<Value> {
        match self.stack.last() {
            Some(&v) if self.stack.len() > self.frame_start() => Ok(v),
            _ => {
                let name = opcode_name(op).unwrap_or("?");
                Err(self.err(at, format!("{name} needs an object on the stack, but it is empty (or at a MARK)")))
            }
        }
    }

    fn int(&mut self, v: Int, at: u64) -> Result<()> {
        match v {
            Int::Small(i) => self.push(Value::Int(i), at),
            Int::Big(text) => self.push_node(Kind::BigInt(text), at),
        }
    }

    fn str(&mut self, bytes: Vec<u8>, at: u64, op: u8) -> Result<()> {
        let s = String::from_utf8(bytes).map_err(|_| self.not_utf8(at, op))?;
        self.push_node(Kind::Str(s), at)
    }

    #[cold]
    fn not_utf8(&self, at: u64, op: u8) -> Error {
        let name = opcode_name(op).unwrap_or("?");
        self.err(
            at,
            format!("{name}: a str that is not valid UTF-8 (or holds lone surrogates, which a Rust String cannot)"),
        )
    }

    fn bytes(&mut self, bytes: Vec<u8>, at: u64) -> Result<()> {
        self.push_node(Kind::Bytes(bytes), at)
    }

    /// A Python 2 `str` (`BINSTRING`), as the settings say (ASCII text by default, as
    /// `np.load`).
    fn py2_str(&mut self, bytes: Vec<u8>, at: u64, op: u8) -> Result<()> {
        match self.strings {
            Python2Strings::Latin1 => {
                return self.push_node(Kind::Str(bytes.iter().map(|&b| char::from(b)).collect()), at)
            }
            Python2Strings::Bytes => return self.push_node(Kind::Bytes(bytes), at),
            _ => {}
        }
        if !bytes.is_ascii() {
            let name = opcode_name(op).unwrap_or("?");
            return Err(self.err(
                at,
                format!(
                    "{name}: a Python 2 str with non-ASCII bytes (np.load refuses it too, unless given an encoding)"
                ),
            ));
        }
        self.str(bytes, at, op)
    }

    fn text(&self, line: Vec<u8>, at: u64, op: u8) -> Result<String> {
        String::from_utf8(line).map_err(|_| {
            let name = opcode_name(op).unwrap_or("?");
            self.err(at, format!("the argument of {name} is not text"))
        })
    }

    fn memo_index(&self, line: Vec<u8>, at: u64, op: u8) -> Result<u32> {
        let text = self.text(line, at, op)?;
        text.parse::<u32>().map_err(|_| {
            let name = opcode_name(op).unwrap_or("?");
            self.err(at, format!("{name} needs a memo index, found {}", quote(&text)))
        })
    }

    fn put(&mut self, index: u32, at: u64, op: u8) -> Result<()> {
        let v = self.top(at, op)?;
        let i = index as usize;
        if let Some(slot) = self.memo.get_mut(i) {
            *slot = v;
        } else if i == self.memo.len() {
            if !reserve(&mut self.memo, 1, &mut self.budget, self.input.pos) {
                return Err(self.over(at));
            }
            self.memo.push(v);
            if !self.sparse.is_empty() {
                self.sparse.remove(&index);
            }
        } else {
            if self.sparse.len() == self.sparse.capacity() {
                let grown = table_cost(self.sparse.capacity().max(4).saturating_mul(2));
                self.charge(grown, at)?;
            }
            self.sparse.insert(index, v);
        }
        Ok(())
    }

    /// How many memo entries there are (the index `MEMOIZE` gives, as Python's `len(memo)`).
    fn memo_len(&self) -> usize {
        self.memo.len() + self.sparse.len()
    }

    fn get(&mut self, index: u32, at: u64) -> Result<()> {
        let v = self.memo.get(index as usize).or_else(|| self.sparse.get(&index));
        let v = *v.ok_or_else(|| self.err(at, format!("memo entry {index} was never stored")))?;
        self.push(v, at)
    }

    /// Frees a buffer of values taken off the stack, refunding what [`Self::pop_mark`]
    /// charged for it.
    fn free(&mut self, items: Vec<Value>) {
        self.budget.refund(vec_cost::<Value>(items.capacity()));
    }

    /// Runs opcodes up to `STOP`, then builds the array's values. Each family of opcodes
    /// is one step below; `STOP` and the three constants are too short to be one.
    /// Runs the opcodes up to `STOP`, whose offset it gives.
    fn run(&mut self, progress: &mut dyn FnMut(u64) -> bool) -> Result<u64> {
        let mut reported = 0;
        loop {
            let at = self.input.pos;
            // (Always `false` but for a sparse input.) The step before looked at what a gap
            // left out: no opcode from it on is approved.
            if self.input.reader.wanted_gap() {
                return Err(self.err(at, "the check needs the content of a payload left out"));
            }
            if at - reported >= PROGRESS_EVERY {
                if !progress(at) {
                    return Err(self.err(at, "the check was stopped"));
                }
                reported = at;
            }
            let Some(op) = self.input.byte()? else {
                return Err(self.err(at, "the pickle ends before its STOP opcode"));
            };
            match op {
                STOP => return Ok(at),
                PROTO | FRAME => self.protocol_op(op, at)?,
                MARK | POP | POP_MARK => self.mark_op(op, at)?,
                NONE => self.push(Value::None, at)?,
                NEWTRUE => self.push(Value::Bool(true), at)?,
                NEWFALSE => self.push(Value::Bool(false), at)?,
                INT | LONG | BININT | BININT1 | BININT2 | LONG1 | LONG4 => self.int_op(op, at)?,
                FLOAT | BINFLOAT => self.float_op(op, at)?,
                SHORT_BINSTRING | BINSTRING | UNICODE | SHORT_BINUNICODE | BINUNICODE | BINUNICODE8 => {
                    self.str_op(op, at)?;
                }
                SHORT_BINBYTES | BINBYTES | BINBYTES8 => self.bytes_op(op, at)?,
                EMPTY_LIST | EMPTY_TUPLE | EMPTY_DICT | LIST | TUPLE | TUPLE1 | TUPLE2 | TUPLE3 | DICT => {
                    self.container_op(op, at)?;
                }
                APPEND | APPENDS | SETITEM | SETITEMS => self.fill_op(op, at)?,
                PUT | BINPUT | LONG_BINPUT | MEMOIZE | GET | BINGET | LONG_BINGET => self.memo_op(op, at)?,
                GLOBAL | STACK_GLOBAL | REDUCE | BUILD => self.reconstruct_op(op, at)?,
                EMPTY_SET | ADDITEMS | FROZENSET | BYTEARRAY8 => self.set_op(op, at)?,
                NEWOBJ => self.newobj(op, at)?,
                other => return Err(self.refused(other, at)),
            }
        }
    }

    /// The error of an opcode that is not decoded: a known one with why it is refused, or
    /// an unknown one. (Each step below also gives it for an opcode not of its family,
    /// which `run` never passes.)
    #[cold]
    fn refused(&self, op: u8, at: u64) -> Error {
        match opcode_name(op) {
            Some(name) => self.err(at, format!("opcode {name} is not allowed: {}", refusal(op))),
            None => self.err(at, format!("unknown opcode 0x{op:02x}")),
        }
    }

    /// `PROTO` and `FRAME`.
    fn protocol_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            PROTO => {
                let [v] = self.input.array::<1>(at, op)?;
                if v > 5 {
                    return Err(self.err(at, format!("unsupported pickle protocol {v} (0 to 5 are known)")));
                }
                Ok(())
            }
            FRAME => {
                // Frames only group opcodes for buffered reading; their sizes are not
                // needed to read exactly.
                self.input.array::<8>(at, op)?;
                Ok(())
            }
            _ => Err(self.refused(op, at)),
        }
    }

    /// `MARK`, `POP` (of a value, or of an empty frame's mark) and `POP_MARK`.
    fn mark_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            MARK => {
                if !reserve(&mut self.marks, 1, &mut self.budget, self.input.pos) {
                    return Err(self.over(at));
                }
                self.marks.push(self.stack.len());
            }
            POP => {
                if self.marks.last() == Some(&self.stack.len()) {
                    self.marks.pop();
                } else {
                    self.pop(at, op)?;
                }
            }
            POP_MARK => {
                let items = self.pop_mark(at, op)?;
                self.free(items);
            }
            _ => return Err(self.refused(op, at)),
        }
        Ok(())
    }

    /// The ints: `INT` (and its bools `00`, `01`), `LONG`, `BININT`, `BININT1`,
    /// `BININT2`, `LONG1`, `LONG4`.
    fn int_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            INT => {
                let line = self.input.line(MAX_INT_DIGITS + 2, at, op)?;
                match &line[..] {
                    b"00" => self.push(Value::Bool(false), at),
                    b"01" => self.push(Value::Bool(true), at),
                    _ => {
                        let text = self.text(line, at, op)?;
                        let v = bigint::parse_decimal(&text).map_err(|e| self.err(at, format!("INT: {e}")))?;
                        self.int(v, at)
                    }
                }
            }
            LONG => {
                let line = self.input.line(MAX_INT_DIGITS + 3, at, op)?;
                let text = self.text(line, at, op)?;
                let text = text.strip_suffix('L').unwrap_or(&text);
                let v = bigint::parse_decimal(text).map_err(|e| self.err(at, format!("LONG: {e}")))?;
                self.int(v, at)
            }
            BININT => {
                let b = self.input.array::<4>(at, op)?;
                self.push(Value::Int(i64::from(i32::from_le_bytes(b))), at)
            }
            BININT1 => {
                let [b] = self.input.array::<1>(at, op)?;
                self.push(Value::Int(i64::from(b)), at)
            }
            BININT2 => {
                let b = self.input.array::<2>(at, op)?;
                self.push(Value::Int(i64::from(u16::from_le_bytes(b))), at)
            }
            LONG1 | LONG4 => {
                let n = if op == LONG1 {
                    u64::from(self.input.array::<1>(at, op)?[0])
                } else {
                    let n = i32::from_le_bytes(self.input.array::<4>(at, op)?);
                    u64::try_from(n).map_err(|_| self.err(at, "LONG4 with a negative length"))?
                };
                if n > MAX_LONG_BYTES as u64 {
                    return Err(
                        self.err(at, format!("an int of {n} bytes: more than Python prints ({MAX_INT_DIGITS} digits)"))
                    );
                }
                let bytes = self.input.bytes(n, at, op)?;
                let v = bigint::from_le_bytes(&bytes);
                if matches!(&v, Int::Big(t) if t.trim_start_matches('-').len() > MAX_INT_DIGITS) {
                    return Err(self.err(at, format!("an int of more than {MAX_INT_DIGITS} digits (Python's limit)")));
                }
                self.int(v, at)
            }
            _ => Err(self.refused(op, at)),
        }
    }

    /// The floats: `FLOAT` (text) and `BINFLOAT`.
    fn float_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            FLOAT => {
                let line = self.input.line(MAX_FLOAT_LINE, at, op)?;
                let text = self.text(line, at, op)?;
                let x = parse_float(&text)
                    .ok_or_else(|| self.err(at, format!("FLOAT: {} is not a float", quote(&text))))?;
                self.push(Value::Float(x), at)
            }
            BINFLOAT => {
                let b = self.input.array::<8>(at, op)?;
                self.push(Value::Float(f64::from_be_bytes(b)), at)
            }
            _ => Err(self.refused(op, at)),
        }
    }

    /// The strs: Python 2's `SHORT_BINSTRING` and `BINSTRING` (ASCII), `UNICODE` (raw
    /// unicode escape), `SHORT_BINUNICODE`, `BINUNICODE` and `BINUNICODE8` (UTF-8).
    fn str_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            SHORT_BINSTRING | BINSTRING => {
                let n = if op == SHORT_BINSTRING {
                    u64::from(self.input.array::<1>(at, op)?[0])
                } else {
                    let n = i32::from_le_bytes(self.input.array::<4>(at, op)?);
                    u64::try_from(n).map_err(|_| self.err(at, "BINSTRING with a negative length"))?
                };
                let bytes = self.payload(n, at, op)?;
                self.py2_str(bytes, at, op)
            }
            UNICODE => {
                let line = self.input.line(self.room(), at, op)?;
                let s = raw_unicode_escape(&line).map_err(|e| self.err(at, format!("UNICODE: {e}")))?;
                self.push_node(Kind::Str(s), at)
            }
            SHORT_BINUNICODE | BINUNICODE | BINUNICODE8 => {
                let n = self.length(op, SHORT_BINUNICODE, BINUNICODE, at)?;
                if let Some(start) = self.input.span(n) {
                    let whole = self.input.reader.whole().unwrap_or_default();
                    // `span` checked both ends and that both fit a u32.
                    let text = &whole[start as usize..start as usize + n as usize];
                    // ASCII first: word at a time, and most strs are.
                    if !text.is_ascii() && std::str::from_utf8(text).is_err() {
                        return Err(self.not_utf8(at, op));
                    }
                    // What decoding would take for it, so the check passes exactly what
                    // decoding passes.
                    self.charge(alloc_cost(n as usize), at)?;
                    return self.push(Value::StrAt { start, len: n as u32 }, at);
                }
                let bytes = self.payload(n, at, op)?;
                self.str(bytes, at, op)
            }
            _ => Err(self.refused(op, at)),
        }
    }

    /// The bytes: `SHORT_BINBYTES`, `BINBYTES`, `BINBYTES8`.
    fn bytes_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            SHORT_BINBYTES | BINBYTES | BINBYTES8 => {
                let n = self.length(op, SHORT_BINBYTES, BINBYTES, at)?;
                if n > self.room() as u64 {
                    let name = opcode_name(op).unwrap_or("?");
                    return Err(self.err(at, format!("{name} of {n} bytes: {}", self.budget.exceeded(self.input.pos))));
                }
                if op != SHORT_BINBYTES && self.input.reader.gap(n) {
                    // A payload a sparse input left out: charged as any, and below the
                    // budget, so it fits a usize.
                    self.input.pos += n;
                    self.charge(alloc_cost(n as usize), at)?;
                    return self.push(Value::BytesOut { len: n }, at);
                }
                if let Some(start) = self.input.span(n) {
                    // What decoding takes for it, so the check passes exactly what decoding
                    // passes.
                    self.charge(alloc_cost(n as usize), at)?;
                    return self.push(Value::BytesAt { start, len: n as u32 }, at);
                }
                let bytes = self.payload(n, at, op)?;
                self.bytes(bytes, at)
            }
            _ => Err(self.refused(op, at)),
        }
    }

    /// The length argument of a `SHORT_`/4-byte/8-byte opcode of a family.
    fn length(&mut self, op: u8, short: u8, four: u8, at: u64) -> Result<u64> {
        Ok(if op == short {
            u64::from(self.input.array::<1>(at, op)?[0])
        } else if op == four {
            u64::from(u32::from_le_bytes(self.input.array::<4>(at, op)?))
        } else {
            u64::from_le_bytes(self.input.array::<8>(at, op)?)
        })
    }

    /// The opcodes that make a container: `EMPTY_LIST`, `EMPTY_TUPLE`, `EMPTY_DICT`, and
    /// `LIST`, `TUPLE`, `TUPLE1`, `TUPLE2`, `TUPLE3`, `DICT` of the values on the stack.
    fn container_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            EMPTY_LIST if self.input.reader.whole().is_some() => {
                self.push_node(Kind::ListOf { len: 0, strings: Strings::default() }, at)
            }
            EMPTY_LIST => self.push_node(Kind::List(Vec::new()), at),
            EMPTY_TUPLE => self.tuple(self.stack.len(), at),
            EMPTY_DICT => self.push_node(self.empty_dict(), at),
            LIST if self.input.reader.whole().is_some() => {
                let from = self.end_mark(at, op)?;
                let mut strings = Strings::default();
                for &v in &self.stack[from..] {
                    strings.add(v, self.is_str(v));
                }
                let len = self.stack.len() - from;
                let depth = self.depth_around(0, &self.stack[from..], at)?;
                let list = self.node(Kind::ListOf { len, strings }, at)?;
                if let Value::Node(i) = list {
                    self.nodes[i as usize].set_depth(depth);
                }
                self.stack.truncate(from);
                self.push(list, at)
            }
            LIST => {
                let items = self.pop_mark(at, op)?;
                self.push_node(Kind::List(items), at)
            }
            TUPLE => {
                let from = self.end_mark(at, op)?;
                self.tuple(from, at)
            }
            TUPLE1 | TUPLE2 | TUPLE3 => {
                let from = self.top_values(usize::from(op - TUPLE1 + 1), at, op)?;
                self.tuple(from, at)
            }
            DICT => {
                let from = self.end_mark(at, op)?;
                let dict = self.node(self.empty_dict(), at)?;
                if !reserve(&mut self.stack, 1, &mut self.budget, self.input.pos) {
                    return Err(self.over(at));
                }
                self.stack.insert(from, dict);
                self.fill(from + 1, "dict", at, op)
            }
            _ => Err(self.refused(op, at)),
        }
    }

    /// The opcodes that fill the list or dict on top of the stack: `APPEND`, `APPENDS`,
    /// `SETITEM`, `SETITEMS`.
    fn fill_op(&mut self, op: u8, at: u64) -> Result<()> {
        let (from, want) = match op {
            APPEND => (self.top_values(1, at, op)?, "list"),
            SETITEM => (self.top_values(2, at, op)?, "dict"),
            APPENDS => (self.end_mark(at, op)?, "list"),
            SETITEMS => (self.end_mark(at, op)?, "dict"),
            _ => return Err(self.refused(op, at)),
        };
        self.fill(from, want, at, op)
    }

    /// The memo: `PUT`, `BINPUT`, `LONG_BINPUT`, `MEMOIZE`, and `GET`, `BINGET`,
    /// `LONG_BINGET`.
    fn memo_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            PUT => {
                let line = self.input.line(MAX_NAME_LINE, at, op)?;
                let i = self.memo_index(line, at, op)?;
                self.put(i, at, op)
            }
            BINPUT => {
                let [i] = self.input.array::<1>(at, op)?;
                self.put(u32::from(i), at, op)
            }
            LONG_BINPUT => {
                let i = u32::from_le_bytes(self.input.array::<4>(at, op)?);
                self.put(i, at, op)
            }
            MEMOIZE => {
                let i = u32::try_from(self.memo_len()).map_err(|_| self.err(at, "memo overflow"))?;
                self.put(i, at, op)
            }
            GET => {
                let line = self.input.line(MAX_NAME_LINE, at, op)?;
                let i = self.memo_index(line, at, op)?;
                self.get(i, at)
            }
            BINGET => {
                let [i] = self.input.array::<1>(at, op)?;
                self.get(u32::from(i), at)
            }
            LONG_BINGET => {
                let i = u32::from_le_bytes(self.input.array::<4>(at, op)?);
                self.get(i, at)
            }
            _ => Err(self.refused(op, at)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn decode_all(p: &[u8]) -> Result<Decoded> {
        decode(p, 0, Some(p.len() as u64), Settings::default())
    }

    /// An object array pickle (protocol 2 opcodes) of `n` elements pushed by `items`.
    pub(super) fn wrap(n: u8, items: &[u8]) -> Vec<u8> {
        let mut p =
            b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85U\x01b\x87R(K\x01".to_vec();
        p.extend_from_slice(&[b'K', n, 0x85]);
        p.extend_from_slice(
            b"cnumpy\ndtype\nU\x02O8K\x00K\x01\x87R(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tbI00\n](",
        );
        p.extend_from_slice(items);
        p.extend_from_slice(b"etb.");
        p
    }

    pub(super) fn values(n: u8, items: &[u8]) -> Vec<Object> {
        decode_all(&wrap(n, items)).unwrap_or_else(|e| panic!("{e}")).items
    }

    pub(super) fn error(n: u8, items: &[u8]) -> String {
        decode_all(&wrap(n, items)).unwrap_err().to_string()
    }

    #[test]
    fn old_numpy_names_and_python_2_idioms_decode() {
        // numpy.core (NumPy 1.x), SHORT_BINSTRING typecodes and dtype args, INT 00.
        assert_eq!(values(1, b"N"), [Object::None]);
        assert_eq!(values(2, b"U\x02hiI01\n"), [Object::from("hi"), Object::Bool(true)]);
        assert_eq!(values(1, b"L-12345678901234567890L\n"), [Object::BigInt("-12345678901234567890".into())]);
        assert_eq!(values(1, b"F-1.5e300\n"), [Object::Float(-1.5e300)]);
        assert_eq!(values(1, b"Vcaf\xe9 \\u20ac \\\\u0041\n"), [Object::from("café € \\\\u0041")]);
        assert_eq!(values(1, b"c__builtin__\nbytes\n)R"), [Object::Bytes(vec![])]);
        assert_eq!(
            values(1, b"c_codecs\nencode\nX\x03\x00\x00\x00\xc3\xbfaX\x06\x00\x00\x00latin1\x86R"),
            [Object::Bytes(vec![0xff, b'a'])]
        );
    }

    #[test]
    fn memo_stack_and_mark_opcodes_follow_python() {
        // PUT/GET text forms, POP of a value, POP of an empty frame's MARK, POP_MARK.
        assert_eq!(values(2, b"Np7\n0(1K\x05g7\n"), [Object::Int(5), Object::None]);
        assert_eq!(values(1, b"K\x01(0"), [Object::Int(1)]);
        // DICT from a marked frame, SETITEMS, tuples of each size, LIST.
        let v = values(3, b"(K\x01K\x02d}(K\x03K\x04u((NNNNtl");
        assert_eq!(v[0].to_string(), "{1: 2}");
        assert_eq!(v[1].to_string(), "{3: 4}");
        assert_eq!(v[2].to_string(), "[(None, None, None, None)]");
        // A list shared through the memo and appended to later: both places see it, and
        // the array keeps only the values it held when built (NumPy copies them).
        let v = values(2, b"]q\x00h\x00K\x01a");
        assert_eq!(v, [Object::List(vec![Object::Int(1)]), Object::List(vec![Object::Int(1)])]);
    }

    #[test]
    fn errors_name_the_opcode_global_and_offset() {
        let p = wrap(1, b"cos\nsystem\n");
        let e = decode_all(&p).unwrap_err();
        let at = p.windows(3).position(|w| w == b"cos").unwrap() as u64;
        assert!(matches!(e.kind(), crate::error::ErrorKind::Pickle { offset, .. } if *offset == at), "{e}");
        assert!(error(1, b"\x81").contains("NEWOBJ needs a value"));
        assert!(error(1, b"cos\nsystem\n)\x81").contains("global 'os.system' is not allowed"));
        assert!(error(1, b"cbuiltins\nrange\n)\x81").contains("NEWOBJ of a builtins.range is not allowed"));
        assert!(error(1, b"\x92").contains("opcode NEWOBJ_EX is not allowed"));
        assert!(error(1, b"\xa0").contains("unknown opcode 0xa0"));
        assert!(error(1, b"X\x50\x00\x00\x00ab").contains("the pickle ends inside the argument of BINUNICODE"));
        assert!(error(2, b"N").contains("the ndarray's list holds 1 values, but its shape (2,) needs 2"));
        assert!(error(1, b"N.").contains("STOP inside a MARK"));
        let deep: Vec<u8> = [vec![b']'; MAX_DEPTH + 1], vec![b'a'; MAX_DEPTH]].concat();
        assert!(error(1, &deep).contains("nested deeper than 256 levels"));
        let fits: Vec<u8> = [vec![b']'; MAX_DEPTH], vec![b'a'; MAX_DEPTH - 1]].concat();
        assert_eq!(values(1, &fits).len(), 1);
        let p = wrap(1, b"\x81");
        let e = decode(&p[..], 100, Some(p.len() as u64), Settings::default()).unwrap_err();
        assert!(e.to_string().starts_with(&format!("invalid pickle at byte {}", 100 + p.len() - 5)), "{e}");
    }

    #[test]
    fn depth_is_checked_as_values_nest() {
        // 100,000 nested tuples: refused at the level that is too deep, long before the end.
        let mut items = b")".to_vec();
        items.extend(std::iter::repeat_n(TUPLE1, 100_000));
        let p = wrap(1, &items);
        let e = decode_all(&p).unwrap_err();
        let start = p.len() - items.len() - 4;
        let crate::error::ErrorKind::Pickle { offset, reason } = e.kind() else { panic!("{e}") };
        // `)` is 1 level, each TUPLE1 one more.
        assert_eq!(*offset as usize, start + MAX_NODE_DEPTH, "{e}");
        assert!(reason.contains("nested deeper than 256 levels"), "{e}");
        // Dicts, by SETITEM: {None: {None: ...}}.
        let mut items = b"}".to_vec();
        items.extend(b"N}".repeat(1000));
        items.extend([b's'; 1000]);
        assert!(error(1, &items).contains("nested deeper than 256 levels"));
        // Lists put in each other through the memo while empty: the machine sees depth 2,
        // the conversion counts the levels and stops at the limit.
        let op = |op: u8, i: u32| [&[op][..], &i.to_le_bytes()].concat();
        let mut items = Vec::new();
        for i in 0..=MAX_DEPTH as u32 {
            items.extend([&b"]"[..], &op(LONG_BINPUT, i), b"0"].concat());
            if i > 0 {
                items.extend([op(LONG_BINGET, i - 1), op(LONG_BINGET, i), b"a0".to_vec()].concat());
            }
        }
        items.extend(op(LONG_BINGET, 0));
        let e = error(1, &items);
        assert!(e.contains("element 0 (in C order): values nested deeper than 256 levels"), "{e}");
    }

    #[test]
    fn the_deepest_values_print_pickle_and_drop_on_a_small_stack() {
        // What the decoder gives is at most MAX_DEPTH levels deep, so every recursion over
        // it (repr, the pickler, Drop) is bounded: here on a 1 MiB stack, half a test's.
        let deepest: Vec<u8> = [vec![b']'; MAX_DEPTH], vec![b'a'; MAX_DEPTH - 1]].concat();
        let items = values(1, &deepest);
        let worker = std::thread::Builder::new().stack_size(1 << 20).spawn(move || {
            assert_eq!(items[0].repr(), format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH)));
            let array = crate::array::Array::from_shape_vec(vec![1], items).unwrap();
            let pickle = crate::object::to_pickle(&array).unwrap();
            assert_eq!(decode_all(&pickle).unwrap().items, array.as_slice());
            drop(array);
        });
        worker.unwrap().join().unwrap();
    }

    #[test]
    fn shared_values_are_copied_and_single_ones_moved() {
        // A memoised str, list and dict each used twice; a str used once.
        let v = values(7, b"X\x02\x00\x00\x00abq\x00h\x00(K\x01K\x02lq\x01h\x01}q\x02h\x02X\x01\x00\x00\x00c");
        let ab = Object::from("ab");
        let list = Object::List(vec![Object::Int(1), Object::Int(2)]);
        let dict = Object::Dict(vec![]);
        assert_eq!(v, [ab.clone(), ab, list.clone(), list, dict.clone(), dict, Object::from("c")]);
        // A list holding the same list twice, and the array's own list inside itself
        // (which NumPy would print as [[...]]): copies, then the depth limit, never an
        // empty list in its place.
        let v = values(1, b"(K\x01lq\x000(h\x00h\x00l");
        let one = Object::List(vec![Object::Int(1)]);
        assert_eq!(v, [Object::List(vec![one.clone(), one])]);
        let mut p = wrap(1, b"");
        let at = p.windows(2).position(|w| w == b"](").unwrap();
        p.splice(at + 1..at + 1, *b"q\x09");
        let end = p.len() - 4;
        p.splice(end..end, *b"h\x09");
        let e = decode_all(&p).unwrap_err().to_string();
        assert!(e.contains("nested deeper than 256 levels"), "{e}");
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn budget_stops_memo_bombs_and_fixed_limits_hold() {
        // [L, L] with L = [M, M], ...: 2^40 values from a few hundred bytes.
        let mut items = b"(NNlq\x000".to_vec();
        for i in 1..40u8 {
            items.extend_from_slice(&[b'(', b'h', i - 1, b'h', i - 1, b'l', b'q', i, b'0']);
        }
        items.extend_from_slice(&[b'h', 39]);
        let e = decode_all(&wrap(1, &items)).unwrap_err();
        assert!(e.to_string().contains("ReadOptions::max_object_bytes"), "{e}");
        let small = wrap(1, b"X\x10\x00\x00\x00aaaaaaaaaaaaaaaa");
        assert!(decode(&small[..], 0, Some(small.len() as u64), Settings::limit(1 << 20)).is_ok());
        let e = decode(&small[..], 0, Some(small.len() as u64), Settings::limit(400)).unwrap_err();
        assert!(e.to_string().contains("allowed (ReadOptions::max_object_bytes)"), "{e}");
    }

    #[test]
    fn buffers_kept_from_a_decode_are_charged_to_the_next_from_empty() {
        // A decode of 200 memoised tuples leaves its buffers for the next; a decode under a
        // small fixed budget that grows its stack and memo past that budget is refused
        // all the same (whether or not it got them: other tests decode meanwhile).
        let tuples: Vec<u8> = (0..200u8).flat_map(|i| [b'K', i, 0x85, 0x94]).collect();
        let items = [&b"("[..], &tuples, b"t"].concat();
        assert!(decode_all(&wrap(1, &items)).is_ok());
        let small = wrap(1, &items);
        let e = decode(&small[..], 0, Some(small.len() as u64), Settings::limit(4 << 10)).unwrap_err();
        assert!(e.to_string().contains("allowed (ReadOptions::max_object_bytes)"), "{e}");
        // Too big a set is not kept.
        let max = buffers::SPARE_MAX;
        let big = Buffers { nodes: Vec::with_capacity(max / 40 + 1), ..Buffers::default() };
        assert!(big.bytes() > max);
    }

    #[test]
    fn text_helpers() {
        assert_eq!(raw_unicode_escape(b"a\\u00e9\\U0001F600\\x").unwrap(), "aé\u{1F600}\\x");
        assert_eq!(raw_unicode_escape(b"\\\\u0041").unwrap(), "\\\\u0041");
        assert!(raw_unicode_escape(b"\\u12").is_err());
        assert!(raw_unicode_escape(b"\\ud800").is_err());
        assert_eq!(parse_float("1e-05"), Some(1e-5));
        assert_eq!(parse_float("-inf"), Some(f64::NEG_INFINITY));
        assert!(parse_float("nan").unwrap().is_nan());
        assert_eq!(parse_float("1_0"), None);
        assert_eq!(parse_float(""), None);
    }
}
