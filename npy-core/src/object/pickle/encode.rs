//! Encoding: what CPython's C pickler writes for an object array under protocol 4.

mod dtype;
mod ndarray;
mod stdlib;

use std::collections::HashMap;

use super::{
    APPEND, APPENDS, BINBYTES, BINBYTES8, BINFLOAT, BINGET, BININT, BININT1, BININT2, BINUNICODE, BINUNICODE8, BUILD,
    EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE, FRAME, LONG1, LONG4, LONG_BINGET, MARK, MEMOIZE, NEWFALSE, NEWTRUE, NONE,
    PROTO, REDUCE, SETITEM, SETITEMS, SHORT_BINBYTES, SHORT_BINUNICODE, STACK_GLOBAL, STOP, TUPLE, TUPLE1,
};
use crate::error::{Error, Result};
use crate::object::bigint::{self, Int};
use crate::object::{Object, MAX_DEPTH};

/// Frames are committed once they hold this much (CPython's `FRAME_SIZE_TARGET`); payloads
/// this large are written outside frames.
const FRAME_SIZE_TARGET: usize = 64 * 1024;
/// Shorter frames lose their header (CPython's `FRAME_SIZE_MIN`).
const FRAME_SIZE_MIN: usize = 4;
const FRAME_HEADER_SIZE: usize = 9;
/// Items per `APPENDS`/`SETITEMS`/`ADDITEMS` (CPython's `BATCHSIZE`).
const BATCH: usize = 1000;

// Opcodes only the encoder writes (protocol 2 and 4).
const NEWOBJ: u8 = 0x81;
const EMPTY_SET: u8 = 0x8f;
const ADDITEMS: u8 = 0x90;
const FROZENSET: u8 = 0x91;

/// The result of a `save()`: the reason when a value cannot be written.
type Saved = std::result::Result<(), String>;

/// Which of a global's module and name CPython shares with other uses of the same text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Names {
    /// A C type or function (`datetime.date`, `numpy.ndarray`): the module name interned
    /// (`type.__module__` interns it), the name made anew by each lookup (from `tp_name`).
    C,
    /// A Python class (`fractions.Fraction`): its `__module__` is its module's `__name__`,
    /// interned, and its `__qualname__` is interned.
    Python,
    /// A Python class of a module imported while Python starts (`collections.Counter`):
    /// that module's `__name__` is not interned, so it is one object shared only by that
    /// module's classes. (A process that interned the name first, by some import, shares
    /// it with `OrderedDict`'s: NumPy's output then varies; this is a plain interpreter's.)
    PythonStartup,
    /// A builtin function (`builtins.getattr`): its `__module__` is the `builtins`
    /// module's own name, another object than the `'builtins'` builtin types name, shared
    /// only by such functions; its name is made anew.
    CFunction,
}

/// An element that can be written as a Python value: [`Object`], `String`, `&str` and
/// `Option`s of them.
pub(crate) trait Encode {
    /// Pickles the value, `depth` levels down; the reason when it cannot be written.
    fn save(&self, enc: &mut Encoder, depth: usize) -> std::result::Result<(), String>;
}

impl Encode for Object {
    fn save(&self, enc: &mut Encoder, depth: usize) -> std::result::Result<(), String> {
        enc.object(self, depth)
    }
}

impl Encode for String {
    fn save(&self, enc: &mut Encoder, _: usize) -> std::result::Result<(), String> {
        enc.save_value_str(self);
        Ok(())
    }
}

impl Encode for &str {
    fn save(&self, enc: &mut Encoder, _: usize) -> std::result::Result<(), String> {
        enc.save_value_str(self);
        Ok(())
    }
}

impl<T: Encode> Encode for Option<T> {
    fn save(&self, enc: &mut Encoder, depth: usize) -> std::result::Result<(), String> {
        match self {
            None => {
                enc.save_op(NONE);
                Ok(())
            }
            Some(v) => v.save(enc, depth),
        }
    }
}

/// A protocol 4 pickler that writes what CPython's C pickler writes: each value memoised
/// as it does (strings, bytes, tuples, lists, dicts, sets, globals, reduced objects),
/// frames committed at the same opcode boundaries, the same integer and string opcodes.
/// Objects CPython keeps one of are memoised once and fetched after: interned names,
/// one-character strs, empty and one-byte `bytes`, `datetime.timezone.utc`, NumPy's
/// builtin dtypes.
#[derive(Debug, Default)]
pub(crate) struct Encoder {
    out: Vec<u8>,
    framing: bool,
    frame_start: Option<usize>,
    memo: u32,
    /// Memo indices of interned strs: module names of globals, `pathlib` parts, the
    /// attribute names of states (`'int'`).
    names: HashMap<String, u32>,
    globals: HashMap<(&'static str, &'static str), u32>,
    /// Memo indices of `b''` and one-byte `bytes`, one object each in CPython.
    small_bytes: HashMap<Vec<u8>, u32>,
    /// Memo indices of the `__name__`s of modules Python imported at startup (not
    /// interned), as Python classes of those modules name them.
    startup_modules: HashMap<&'static str, u32>,
    /// Memo index of `datetime.timezone.utc`, a singleton.
    utc: Option<u32>,
    /// Memo indices of NumPy's builtin dtypes, one object each (by type string).
    dtypes: HashMap<String, u32>,
    /// Memo indices of one-character strs, one object each in CPython.
    chars: HashMap<char, u32>,
    /// Memo indices of cached `zoneinfo.ZoneInfo`s, one object per key in CPython.
    zones: HashMap<String, u32>,
    /// Memo index of the `(0,)` of `MaskedArray.__reduce__`, a constant of its code.
    masked_shape: Option<u32>,
}

pub(crate) use self::dtype::encode_dict;

impl Encoder {
    fn write(&mut self, data: &[u8]) {
        if self.framing && self.frame_start.is_none() {
            self.frame_start = Some(self.out.len());
            self.out.extend_from_slice(&[0xfe; FRAME_HEADER_SIZE]);
        }
        self.out.extend_from_slice(data);
    }

    fn commit_frame(&mut self) {
        let Some(start) = self.frame_start.take() else { return };
        let len = self.out.len() - start - FRAME_HEADER_SIZE;
        if len >= FRAME_SIZE_MIN {
            self.out[start] = FRAME;
            self.out[start + 1..start + FRAME_HEADER_SIZE].copy_from_slice(&(len as u64).to_le_bytes());
        } else {
            self.out.drain(start..start + FRAME_HEADER_SIZE);
        }
    }

    /// The start of every `save()` in CPython: a full frame is committed.
    fn boundary(&mut self) {
        if let Some(start) = self.frame_start {
            if self.out.len() - start - FRAME_HEADER_SIZE >= FRAME_SIZE_TARGET {
                self.commit_frame();
            }
        }
    }

    /// A header and its payload; large payloads go outside frames.
    fn write_payload(&mut self, header: &[u8], data: &[u8]) {
        if data.len() >= FRAME_SIZE_TARGET {
            self.commit_frame();
            let framing = std::mem::replace(&mut self.framing, false);
            self.write(header);
            self.write(data);
            self.framing = framing;
        } else {
            self.write(header);
            self.write(data);
        }
    }

    fn op(&mut self, op: u8) {
        self.write(&[op]);
    }

    fn memoize(&mut self) -> u32 {
        self.op(MEMOIZE);
        self.memo += 1;
        self.memo - 1
    }

    fn get(&mut self, index: u32) {
        match u8::try_from(index) {
            Ok(i) => self.write(&[BINGET, i]),
            Err(_) => {
                let mut b = [LONG_BINGET, 0, 0, 0, 0];
                b[1..].copy_from_slice(&index.to_le_bytes());
                self.write(&b);
            }
        }
    }

    /// `save()` of a value that is one opcode (`None`, `True`, `False`).
    fn save_op(&mut self, op: u8) {
        self.boundary();
        self.op(op);
    }

    fn save_int(&mut self, v: i64) {
        self.boundary();
        if let Ok(b) = u8::try_from(v) {
            self.write(&[BININT1, b]);
        } else if let Ok(w) = u16::try_from(v) {
            let b = w.to_le_bytes();
            self.write(&[BININT2, b[0], b[1]]);
        } else if let Ok(d) = i32::try_from(v) {
            let b = d.to_le_bytes();
            self.write(&[BININT, b[0], b[1], b[2], b[3]]);
        } else {
            let mut bytes = v.to_le_bytes().to_vec();
            // The fewest bytes, as `encode_long`.
            while bytes.len() > 1 {
                let (last, prev) = (bytes[bytes.len() - 1], bytes[bytes.len() - 2]);
                if (last == 0 && prev & 0x80 == 0) || (last == 0xff && prev & 0x80 != 0) {
                    bytes.pop();
                } else {
                    break;
                }
            }
            self.long(&bytes);
        }
    }

    fn long(&mut self, bytes: &[u8]) {
        match u8::try_from(bytes.len()) {
            Ok(n) => self.write(&[LONG1, n]),
            Err(_) => {
                let mut h = [LONG4, 0, 0, 0, 0];
                h[1..].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
                self.write(&h);
            }
        }
        self.write(bytes);
    }

    fn save_big_int(&mut self, text: &str) -> std::result::Result<(), String> {
        match bigint::parse_decimal(text)? {
            Int::Small(v) => self.save_int(v),
            Int::Big(_) => {
                let bytes = bigint::to_le_bytes(text)?;
                self.boundary();
                self.long(&bytes);
            }
        }
        Ok(())
    }

    fn save_float(&mut self, x: f64) {
        self.boundary();
        let mut b = [BINFLOAT; 9];
        b[1..].copy_from_slice(&x.to_be_bytes());
        self.write(&b);
    }

    fn str_unsaved(&mut self, s: &str) -> u32 {
        let data = s.as_bytes();
        let n = data.len();
        if let Ok(b) = u8::try_from(n) {
            self.write_payload(&[SHORT_BINUNICODE, b], data);
        } else if let Ok(w) = u32::try_from(n) {
            let mut h = [BINUNICODE; 5];
            h[1..].copy_from_slice(&w.to_le_bytes());
            self.write_payload(&h, data);
        } else {
            let mut h = [BINUNICODE8; 9];
            h[1..].copy_from_slice(&(n as u64).to_le_bytes());
            self.write_payload(&h, data);
        }
        self.memoize()
    }

    /// A str made anew (a `Decimal`'s text, a C type's name).
    fn save_str(&mut self, s: &str) {
        self.boundary();
        self.str_unsaved(s);
    }

    /// A str value: one-character strs (code points below 256) are CPython's one object
    /// each, memoised once and fetched after.
    fn save_value_str(&mut self, s: &str) {
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if u32::from(c) < 256 => {
                self.save_name_str(s);
            }
            _ => self.save_str(s),
        }
    }

    /// A `bytes` made by `PyBytes_FromStringAndSize` (NumPy's data, a `bytearray`'s
    /// `bytes(self)`): `b''` and one-byte values are CPython's one object each. (A `bytes`
    /// value of the array is not: a one-byte literal is a constant of its own.)
    fn save_bytes_shared(&mut self, data: &[u8]) {
        if data.len() <= 1 {
            self.boundary();
            if let Some(&i) = self.small_bytes.get(data) {
                self.get(i);
                return;
            }
            self.save_bytes(data);
            self.small_bytes.insert(data.to_vec(), self.memo - 1);
        } else {
            self.save_bytes(data);
        }
    }

    fn save_bytes(&mut self, data: &[u8]) {
        self.boundary();
        let n = data.len();
        if let Ok(b) = u8::try_from(n) {
            self.write_payload(&[SHORT_BINBYTES, b], data);
        } else if let Ok(w) = u32::try_from(n) {
            let mut h = [BINBYTES; 5];
            h[1..].copy_from_slice(&w.to_le_bytes());
            self.write_payload(&h, data);
        } else {
            let mut h = [BINBYTES8; 9];
            h[1..].copy_from_slice(&(n as u64).to_le_bytes());
            self.write_payload(&h, data);
        }
        self.memoize();
    }

    /// An interned str (a module name, a `pathlib` part, an attribute name): memoised once
    /// and fetched after; one-character strs share CPython's one object each.
    fn save_name(&mut self, name: &str) {
        let mut chars = name.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if u32::from(c) < 256 {
                self.save_name_str(name);
                return;
            }
        }
        self.boundary();
        match self.names.get(name) {
            Some(&i) => self.get(i),
            None => {
                let i = self.str_unsaved(name);
                self.names.insert(name.to_string(), i);
            }
        }
    }

    /// A class or function: `STACK_GLOBAL` of its module and its name, then memoised;
    /// `names` says which of the two strs CPython shares with other uses.
    fn save_global_named(&mut self, module: &'static str, name: &'static str, names: Names) {
        self.boundary();
        if let Some(&i) = self.globals.get(&(module, name)) {
            self.get(i);
            return;
        }
        match names {
            Names::C | Names::Python => self.save_name(module),
            Names::PythonStartup | Names::CFunction => {
                self.boundary();
                match self.startup_modules.get(module) {
                    Some(&i) => self.get(i),
                    None => {
                        let i = self.str_unsaved(module);
                        self.startup_modules.insert(module, i);
                    }
                }
            }
        }
        match names {
            Names::C | Names::CFunction => self.save_str(name),
            Names::Python | Names::PythonStartup => self.save_name(name),
        }
        self.op(STACK_GLOBAL);
        let i = self.memoize();
        self.globals.insert((module, name), i);
    }

    /// A global that C defines (NumPy's, the builtins', `datetime`'s).
    fn save_global(&mut self, module: &'static str, name: &'static str) {
        self.save_global_named(module, name, Names::C);
    }

    /// `save_reduce` of `callable(*args)` with no state: the global, the arguments tuple
    /// (`len` items that `items` saves), `REDUCE`, memoised.
    fn save_reduce(
        &mut self,
        (module, name, names): (&'static str, &'static str, Names),
        len: usize,
        items: impl FnOnce(&mut Self) -> Saved,
    ) -> Saved {
        self.boundary();
        self.save_global_named(module, name, names);
        self.save_tuple(len, items)?;
        self.op(REDUCE);
        self.memoize();
        Ok(())
    }

    /// A tuple of items saved by `items`, as `save_tuple` writes it.
    fn save_tuple(
        &mut self,
        len: usize,
        items: impl FnOnce(&mut Self) -> std::result::Result<(), String>,
    ) -> std::result::Result<(), String> {
        self.boundary();
        if len == 0 {
            self.op(EMPTY_TUPLE);
            return Ok(());
        }
        if len <= 3 {
            items(self)?;
            self.op(TUPLE1 + (len as u8 - 1));
        } else {
            self.op(MARK);
            items(self)?;
            self.op(TUPLE);
        }
        self.memoize();
        Ok(())
    }

    fn object(&mut self, obj: &Object, depth: usize) -> std::result::Result<(), String> {
        match obj {
            Object::None => self.save_op(NONE),
            Object::Bool(b) => self.save_op(if *b { NEWTRUE } else { NEWFALSE }),
            Object::Int(v) => self.save_int(*v),
            Object::BigInt(t) => self.save_big_int(t)?,
            Object::Float(x) => self.save_float(*x),
            Object::Complex(re, im) => {
                // complex.__reduce__: (complex, (re, im))
                self.boundary();
                self.save_global("builtins", "complex");
                self.save_tuple(2, |e| {
                    e.save_float(*re);
                    e.save_float(*im);
                    Ok(())
                })?;
                self.op(REDUCE);
                self.memoize();
            }
            Object::Str(s) => self.save_value_str(s),
            Object::Bytes(b) => self.save_bytes(b),
            Object::List(items) => {
                check_depth(depth)?;
                self.boundary();
                self.op(EMPTY_LIST);
                self.memoize();
                self.batch(items, depth)?;
            }
            Object::Tuple(items) => {
                check_depth(depth)?;
                self.save_tuple(items.len(), |e| items.iter().try_for_each(|v| e.object(v, depth + 1)))?;
            }
            Object::Dict(entries) => {
                check_depth(depth)?;
                self.save_dict(entries, depth)?;
            }
            _ => self.object_beyond(obj, depth)?,
        }
        Ok(())
    }

    /// The values beyond plain ones: apart, so that the recursion over nested lists keeps
    /// [`Encoder::object`]'s frame small (a debug build gives every arm's locals one frame).
    #[inline(never)]
    fn object_beyond(&mut self, obj: &Object, depth: usize) -> std::result::Result<(), String> {
        match obj {
            Object::Array(a) => self.save_ndarray(a)?,
            Object::ObjectArray(a) => {
                check_depth(depth)?;
                self.save_object_ndarray(a, depth)?;
            }
            Object::Scalar(a) => self.save_scalar(a)?,
            Object::ByteArray(b) => self.save_bytearray(b)?,
            Object::Set(items) => {
                check_depth(depth)?;
                self.save_set(items, depth)?;
            }
            Object::FrozenSet(items) => {
                check_depth(depth)?;
                self.save_frozenset(items, depth)?;
            }
            Object::OrderedDict(entries) => {
                check_depth(depth)?;
                self.save_ordered_dict(entries, depth)?;
            }
            Object::Counter(entries) => {
                check_depth(depth)?;
                self.save_counter(entries, depth)?;
            }
            Object::Date(d) => self.save_date(d)?,
            Object::Time(t) => self.save_time(t)?,
            Object::DateTime(dt) => self.save_datetime(dt)?,
            Object::TimeDelta(td) => self.save_timedelta(td)?,
            Object::TimeZone(tz) => self.save_timezone(tz)?,
            Object::ZoneInfo(zone) => self.save_zoneinfo(zone)?,
            Object::Deque(d) => {
                check_depth(depth)?;
                self.save_deque(d, depth)?;
            }
            Object::DefaultDict(d) => {
                check_depth(depth)?;
                self.save_defaultdict(d, depth)?;
            }
            Object::MaskedArray(m) => {
                check_depth(depth)?;
                self.save_masked_array(m, depth)?;
            }
            Object::Decimal(text) => self.save_decimal(text)?,
            Object::Fraction(parts) => {
                check_depth(depth)?;
                self.save_fraction(parts, depth)?;
            }
            Object::Uuid(v) => self.save_uuid(*v),
            Object::Path(flavor, parts) => self.save_path(*flavor, parts)?,
            Object::Range(parts) => {
                check_depth(depth)?;
                self.save_range(parts, depth)?;
            }
            Object::Slice(parts) => {
                check_depth(depth)?;
                self.save_slice(parts, depth)?;
            }
            Object::Type(module, name) => self.save_type(module, name)?,
            _ => unreachable!("plain values are written by object"),
        }
        Ok(())
    }

    /// A `dict` (or the one a `Counter` reduces to): `EMPTY_DICT`, memoised, then its
    /// items as `batch_dict_exact` writes them.
    fn save_dict(&mut self, entries: &[(Object, Object)], depth: usize) -> Saved {
        check_keys(entries.iter().map(|(k, _)| k), "a dict key")?;
        self.boundary();
        self.op(EMPTY_DICT);
        self.memoize();
        if let [(k, v)] = entries {
            self.object(k, depth + 1)?;
            self.object(v, depth + 1)?;
            self.op(SETITEM);
        } else if !entries.is_empty() {
            // `batch_dict_exact`: a batch ends after BATCH items, and one more (empty)
            // batch follows a full one.
            let mut rest = entries;
            loop {
                let (batch, tail) = rest.split_at(rest.len().min(BATCH));
                self.op(MARK);
                for (k, v) in batch {
                    self.object(k, depth + 1)?;
                    self.object(v, depth + 1)?;
                }
                self.op(SETITEMS);
                rest = tail;
                if batch.len() < BATCH {
                    break;
                }
            }
        }
        Ok(())
    }

    /// A list's items after its `EMPTY_LIST`, as `batch_list_exact` writes them.
    fn batch<T: Encode>(&mut self, items: &[T], depth: usize) -> std::result::Result<(), String> {
        match items {
            [] => {}
            [one] => {
                one.save(self, depth + 1)?;
                self.op(APPEND);
            }
            _ => {
                for chunk in items.chunks(BATCH) {
                    self.op(MARK);
                    for v in chunk {
                        v.save(self, depth + 1)?;
                    }
                    self.op(APPENDS);
                }
            }
        }
        Ok(())
    }
}

fn check_depth(depth: usize) -> std::result::Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("values nested deeper than {MAX_DEPTH} levels"));
    }
    Ok(())
}

/// Refuses keys (or set items) that Python cannot hash, naming `what` they are.
fn check_keys<'a>(keys: impl IntoIterator<Item = &'a Object>, what: &str) -> Saved {
    for k in keys {
        if let Some(why) = unhashable(k, 0) {
            return Err(format!("{what} that Python cannot hash ({why})"));
        }
    }
    Ok(())
}

/// Why Python 3.11 cannot hash a value (a dict key, a set item), if it cannot: mutable
/// containers, ndarrays, `slice`s (hashable only from 3.12), signalling NaN `Decimal`s,
/// writeable `np.void` scalars, and tuples and frozensets holding any of them.
///
/// Looks no deeper than [`MAX_DEPTH`] levels: deeper values are refused for their depth.
fn unhashable(key: &Object, depth: usize) -> Option<&'static str> {
    if depth > MAX_DEPTH {
        return None;
    }
    match key {
        Object::List(_) => Some("a list"),
        Object::Dict(_) => Some("a dict"),
        Object::Set(_) => Some("a set"),
        Object::ByteArray(_) => Some("a bytearray"),
        Object::OrderedDict(_) => Some("a collections.OrderedDict"),
        Object::Counter(_) => Some("a collections.Counter"),
        Object::Deque(_) => Some("a collections.deque"),
        Object::DefaultDict(_) => Some("a collections.defaultdict"),
        Object::MaskedArray(_) => Some("a numpy.ma.MaskedArray"),
        Object::Array(_) | Object::ObjectArray(_) => Some("a numpy.ndarray"),
        Object::Slice(_) => Some("a slice"),
        Object::Decimal(text) if stdlib::is_signalling_nan(text) => Some("a signalling NaN decimal.Decimal"),
        Object::Scalar(a) if is_void(a.dtype()) => Some("a numpy.void"),
        Object::Tuple(items) | Object::FrozenSet(items) => items.iter().find_map(|v| unhashable(v, depth + 1)),
        _ => None,
    }
}

/// Whether a NumPy scalar of this dtype is an `np.void` (a record, or raw bytes).
fn is_void(dtype: &crate::dtype::DType) -> bool {
    use crate::dtype::{DType, ScalarType};
    match dtype {
        DType::Record(_) => true,
        DType::Scalar(s) => matches!(s.ty(), ScalarType::Void(_)),
        DType::SubArray(_) => false,
    }
}

/// The pickle `np.save` writes for an object array (protocol 4): `elements` in storage
/// order, listed in C order as NumPy lists them (also for a Fortran-order array, whose
/// `is_fortran` flag is set).
///
/// # Errors
/// [`crate::ErrorKind::InvalidValue`] naming the element (storage index) that cannot be
/// written: nesting deeper than [`MAX_DEPTH`], an unhashable dict key, a `BigInt` whose
/// text is not an int.
pub(crate) fn encode_array<T: Encode>(shape: &[usize], fortran: bool, elements: &[T]) -> Result<Vec<u8>> {
    let mut e = Encoder::default();
    e.write(&[PROTO, 4]);
    e.framing = true;
    // save(array) -> save_reduce(_reconstruct, (ndarray, (0,), b'b'), state)
    e.save_reconstruct().map_err(Error::usage)?;
    // The state: (1, shape, dtype, is_fortran, list)
    let mut failed: Option<(usize, String)> = None;
    let state = e.save_tuple(5, |e| {
        e.save_int(1);
        e.save_tuple(shape.len(), |e| {
            for &d in shape {
                let d = i64::try_from(d).map_err(|_| "a dimension beyond i64".to_string())?;
                e.save_int(d);
            }
            Ok(())
        })?;
        e.save_dtype(&crate::dtype::DType::Scalar(crate::dtype::Scalar::new(
            crate::dtype::ScalarType::Object,
            crate::dtype::ByteOrder::NotApplicable,
        )))?;
        e.save_op(if fortran { NEWTRUE } else { NEWFALSE });
        // The values, in C order.
        e.boundary();
        e.op(EMPTY_LIST);
        e.memoize();
        let order = crate::shape::c_order(shape, fortran);
        let mut one = |e: &mut Encoder, c: usize| -> std::result::Result<(), String> {
            let s = order(c);
            elements[s].save(e, 1).map_err(|reason| {
                failed = Some((s, reason));
                String::new()
            })
        };
        let n = elements.len();
        if n == 1 {
            one(e, 0)?;
            e.op(APPEND);
        } else if n > 1 {
            let mut c = 0;
            while c < n {
                e.op(MARK);
                let end = (c + BATCH).min(n);
                while c < end {
                    one(e, c)?;
                    c += 1;
                }
                e.op(APPENDS);
            }
        }
        Ok(())
    });
    if let Err(reason) = state {
        return Err(match failed {
            Some((index, reason)) => crate::error::ErrorKind::InvalidValue { index, reason }.into(),
            None => Error::usage(reason),
        });
    }
    e.op(BUILD);
    e.op(STOP);
    e.commit_frame();
    Ok(e.out)
}

#[cfg(test)]
mod tests;
