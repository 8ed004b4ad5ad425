//! NumPy's array reconstruction: the globals a pickle may name, and `REDUCE` and `BUILD`
//! on them, interpreted here and never called (`_reconstruct`, `ndarray`, `dtype` and its
//! state, `scalar` and its data, NumPy 2's `StringDType` rebuilt by
//! `_convert_to_stringdtype_kwargs`, Python's `complex` and protocol 2 `bytes`).
//!
//! `np.save` of a `StringDType` array writes the header of an object array (`'|O'`) and
//! pickles the array: `_reconstruct(ndarray, (0,), b'b')` built with the state
//! `(1, shape, _convert_to_stringdtype_kwargs(coerce[, na_object]), is_fortran, [str...])`,
//! the missing values being the `na_object` itself. Such an array decodes to the object
//! array `astype(object)` gives in NumPy: its strs, and its `na_object` (only `None`, a
//! float such as NaN, or a str are accepted) where a value is missing.

use super::{quote, Kind, Machine, PickleInput, Value, MAX_NAME_LINE};
use crate::dtype::{DType, Scalar, ScalarType};
use crate::error::{Error, Result};
use crate::object::pickle::{BUILD, GLOBAL, REDUCE, STACK_GLOBAL};
use crate::object::{Object, PathFlavor};
use crate::scalar::{self, Number, ScalarError, Value as S};

/// An array's `BUILD` state: its shape and order, and its values (the first `len` items of
/// a list, which later `APPEND`s cannot change, as in NumPy, which copies them).
#[derive(Debug, Clone)]
pub(super) struct ArrayState {
    pub(super) shape: Vec<usize>,
    pub(super) fortran: bool,
    pub(super) list: u32,
    pub(super) len: usize,
    /// `(coerce, na_object)` of a StringDType array.
    pub(super) strings: Option<(bool, Option<Value>)>,
    /// An array of any dtype but object: the dtype, and the bytes value holding its data
    /// (`list` and `len` are then unused).
    pub(super) raw: Option<(Box<DType>, Value)>,
}

/// The globals a pickle may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Global {
    Reconstruct,
    FromBuffer,
    Scalar,
    Ndarray,
    Dtype,
    Complex,
    Bytes,
    Encode,
    StringDtype,
    Date,
    Time,
    DateTime,
    TimeDelta,
    TimeZone,
    Decimal,
    Fraction,
    Uuid,
    SafeUuid,
    ByteArray,
    Set,
    FrozenSet,
    OrderedDict,
    Counter,
    Path(PathFlavor),
    Range,
    Slice,
    List,
    Dict,
    Tuple,
    Int,
    Float,
    Str,
    Bool,
    Deque,
    DefaultDict,
    ZoneInfo,
    /// `builtins.getattr`: only ever `getattr(zoneinfo.ZoneInfo, '_unpickle')`.
    GetAttr,
    MaReconstruct,
    MaskedArray,
    /// One of the caller's safe globals ([`crate::ReadOptions::safe_globals`]), by index.
    Safe(u16),
}

/// Every `(module, name)` a pickle may name, and what it is: the one list of them
/// ([`crate::object::globals`] gives it to callers). Python 2 names (`__builtin__`,
/// `numpy.core`) are those old NumPy and Python 2 pickles use; `pathlib._local` is where
/// Python 3.13 moved the path classes.
pub(crate) const GLOBALS: [(&str, &str, Global); 58] = [
    ("numpy._core.multiarray", "_reconstruct", Global::Reconstruct),
    ("numpy.core.multiarray", "_reconstruct", Global::Reconstruct),
    // NumPy 1.0's name, in NumPy's own test file `py2-np0-objarr.npy`.
    ("numpy.core._internal", "_reconstruct", Global::Reconstruct),
    // Protocol 5's arrays (`ndarray.__reduce_ex__(5)`): `_frombuffer(buf, dtype, shape, order)`.
    ("numpy._core.numeric", "_frombuffer", Global::FromBuffer),
    ("numpy.core.numeric", "_frombuffer", Global::FromBuffer),
    ("numpy._core.multiarray", "scalar", Global::Scalar),
    ("numpy.core.multiarray", "scalar", Global::Scalar),
    ("numpy", "ndarray", Global::Ndarray),
    ("numpy", "dtype", Global::Dtype),
    ("builtins", "complex", Global::Complex),
    ("__builtin__", "complex", Global::Complex),
    ("builtins", "bytes", Global::Bytes),
    ("__builtin__", "bytes", Global::Bytes),
    ("_codecs", "encode", Global::Encode),
    // NumPy 2 only (StringDType is new in 2.0, after the move to `numpy._core`).
    ("numpy._core._internal", "_convert_to_stringdtype_kwargs", Global::StringDtype),
    ("datetime", "date", Global::Date),
    ("datetime", "time", Global::Time),
    ("datetime", "datetime", Global::DateTime),
    ("datetime", "timedelta", Global::TimeDelta),
    ("datetime", "timezone", Global::TimeZone),
    ("decimal", "Decimal", Global::Decimal),
    ("fractions", "Fraction", Global::Fraction),
    ("uuid", "UUID", Global::Uuid),
    ("uuid", "SafeUUID", Global::SafeUuid),
    ("builtins", "bytearray", Global::ByteArray),
    ("__builtin__", "bytearray", Global::ByteArray),
    ("builtins", "set", Global::Set),
    ("__builtin__", "set", Global::Set),
    ("builtins", "frozenset", Global::FrozenSet),
    ("__builtin__", "frozenset", Global::FrozenSet),
    ("collections", "OrderedDict", Global::OrderedDict),
    ("collections", "Counter", Global::Counter),
    ("pathlib", "PurePosixPath", Global::Path(PathFlavor::PurePosix)),
    ("pathlib", "PureWindowsPath", Global::Path(PathFlavor::PureWindows)),
    ("pathlib", "PosixPath", Global::Path(PathFlavor::Posix)),
    ("pathlib", "WindowsPath", Global::Path(PathFlavor::Windows)),
    ("pathlib._local", "PurePosixPath", Global::Path(PathFlavor::PurePosix)),
    ("pathlib._local", "PureWindowsPath", Global::Path(PathFlavor::PureWindows)),
    ("pathlib._local", "PosixPath", Global::Path(PathFlavor::Posix)),
    ("pathlib._local", "WindowsPath", Global::Path(PathFlavor::Windows)),
    ("builtins", "range", Global::Range),
    ("__builtin__", "xrange", Global::Range),
    ("builtins", "slice", Global::Slice),
    ("__builtin__", "slice", Global::Slice),
    // Classes a `defaultdict`'s factory may be (with set, frozenset, complex, bytes and
    // bytearray above): values, never called.
    ("builtins", "list", Global::List),
    ("builtins", "dict", Global::Dict),
    ("builtins", "tuple", Global::Tuple),
    ("builtins", "int", Global::Int),
    ("builtins", "float", Global::Float),
    ("builtins", "str", Global::Str),
    ("builtins", "bool", Global::Bool),
    ("collections", "deque", Global::Deque),
    ("collections", "defaultdict", Global::DefaultDict),
    ("zoneinfo", "ZoneInfo", Global::ZoneInfo),
    // A ZoneInfo pickles as `getattr(ZoneInfo, '_unpickle')(key, from_cache)`; getattr of
    // anything else is refused.
    ("builtins", "getattr", Global::GetAttr),
    ("numpy.ma.core", "_mareconstruct", Global::MaReconstruct),
    ("numpy.ma", "MaskedArray", Global::MaskedArray),
    ("numpy.ma.core", "MaskedArray", Global::MaskedArray),
];

impl Global {
    pub(super) fn lookup(module: &str, name: &str) -> Option<Global> {
        GLOBALS.iter().find(|(m, n, _)| *m == module && *n == name).map(|&(_, _, g)| g)
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Global::Reconstruct => "numpy._core.multiarray._reconstruct",
            Global::FromBuffer => "numpy._core.numeric._frombuffer",
            Global::Scalar => "numpy._core.multiarray.scalar",
            Global::Ndarray => "numpy.ndarray",
            Global::Dtype => "numpy.dtype",
            Global::Complex => "builtins.complex",
            Global::Bytes => "builtins.bytes",
            Global::Encode => "_codecs.encode",
            Global::StringDtype => "numpy._core._internal._convert_to_stringdtype_kwargs",
            Global::Date => "datetime.date",
            Global::Time => "datetime.time",
            Global::DateTime => "datetime.datetime",
            Global::TimeDelta => "datetime.timedelta",
            Global::TimeZone => "datetime.timezone",
            Global::Decimal => "decimal.Decimal",
            Global::Fraction => "fractions.Fraction",
            Global::Uuid => "uuid.UUID",
            Global::SafeUuid => "uuid.SafeUUID",
            Global::ByteArray => "builtins.bytearray",
            Global::Set => "builtins.set",
            Global::FrozenSet => "builtins.frozenset",
            Global::OrderedDict => "collections.OrderedDict",
            Global::Counter => "collections.Counter",
            Global::Path(PathFlavor::PurePosix) => "pathlib.PurePosixPath",
            Global::Path(PathFlavor::PureWindows) => "pathlib.PureWindowsPath",
            Global::Path(PathFlavor::Posix) => "pathlib.PosixPath",
            Global::Path(PathFlavor::Windows) => "pathlib.WindowsPath",
            Global::Range => "builtins.range",
            Global::Slice => "builtins.slice",
            Global::List => "builtins.list",
            Global::Dict => "builtins.dict",
            Global::Tuple => "builtins.tuple",
            Global::Int => "builtins.int",
            Global::Float => "builtins.float",
            Global::Str => "builtins.str",
            Global::Bool => "builtins.bool",
            Global::Deque => "collections.deque",
            Global::DefaultDict => "collections.defaultdict",
            Global::ZoneInfo => "zoneinfo.ZoneInfo",
            Global::GetAttr => "builtins.getattr",
            Global::MaReconstruct => "numpy.ma.core._mareconstruct",
            Global::MaskedArray => "numpy.ma.MaskedArray",
            Global::Safe(_) => "a safe global",
        }
    }

    /// The class a global names, as an [`Object::Type`] value (`None` for functions,
    /// which are never values).
    pub(super) fn as_type(self) -> Option<(&'static str, &'static str)> {
        let name = self.name();
        match self {
            Global::Reconstruct
            | Global::FromBuffer
            | Global::Scalar
            | Global::Encode
            | Global::StringDtype
            | Global::SafeUuid
            | Global::GetAttr
            | Global::MaReconstruct
            | Global::ZoneInfo
            | Global::MaskedArray
            | Global::Safe(_) => None,
            _ => name.rsplit_once('.'),
        }
    }

    /// Whether the global is a builtin class a `defaultdict`'s factory may be.
    pub(super) fn is_factory(self) -> bool {
        self.name().strip_prefix("builtins.").is_some_and(|n| crate::object::stdlib::FACTORIES.contains(&n))
    }
}

/// A masked array's `BUILD` state: its data as an ndarray's, its mask (a bytes value of
/// one byte per element and field, each 0 or 1) and its fill value (`None` or a 0-d
/// ndarray of the data's dtype).
#[derive(Debug, Clone)]
pub(crate) struct MaskedState {
    pub(super) array: ArrayState,
    pub(super) mask: Value,
    pub(super) fill: Value,
}

impl<R: PickleInput> Machine<R> {
    /// The opcodes of NumPy's array reconstruction: `GLOBAL` and `STACK_GLOBAL` (a name
    /// looked up, never imported), `REDUCE` (a call interpreted) and `BUILD`.
    pub(super) fn reconstruct_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            GLOBAL => {
                let module = self.input.line(MAX_NAME_LINE, at, op)?;
                let name = self.input.line(MAX_NAME_LINE, at, op)?;
                let (module, name) = (String::from_utf8_lossy(&module), String::from_utf8_lossy(&name));
                self.global(&module, &name, at)
            }
            STACK_GLOBAL => {
                let name = self.pop(at, op)?;
                let module = self.pop(at, op)?;
                let (Some(m), Some(n)) = (self.str_text(module), self.str_text(name)) else {
                    return Err(self.err(at, "STACK_GLOBAL needs a module name and a name, both str"));
                };
                // Looked up in place: memoised names are never copied.
                let g = Global::lookup(m, n)
                    .or_else(|| self.safe_global(m, n))
                    .ok_or_else(|| self.refused_global(m, n, at))?;
                self.push_node(Kind::Global(g), at)
            }
            REDUCE => {
                let args = self.pop(at, op)?;
                let callable = self.pop(at, op)?;
                let v = self.reduce(callable, args, at)?;
                self.push(v, at)
            }
            BUILD => {
                let state = self.pop(at, op)?;
                let target = self.top(at, op)?;
                self.build(target, state, at)
            }
            _ => Err(self.refused(op, at)),
        }
    }

    fn global(&mut self, module: &str, name: &str, at: u64) -> Result<()> {
        let g = Global::lookup(module, name)
            .or_else(|| self.safe_global(module, name))
            .ok_or_else(|| self.refused_global(module, name, at))?;
        self.push_node(Kind::Global(g), at)
    }

    /// One of the caller's safe globals.
    fn safe_global(&self, module: &str, name: &str) -> Option<Global> {
        let i = self.safe_globals.iter().position(|(m, n)| m == module && n == name)?;
        u16::try_from(i).ok().map(Global::Safe)
    }

    /// The name of a global, for messages.
    pub(super) fn global_name(&self, g: Global) -> String {
        match g {
            Global::Safe(i) => match self.safe_globals.get(usize::from(i)) {
                Some((m, n)) => format!("{m}.{n}"),
                None => g.name().to_string(),
            },
            _ => g.name().to_string(),
        }
    }

    fn refused_global(&self, module: &str, name: &str, at: u64) -> Error {
        self.err(
            at,
            format!(
                "global {} is not allowed: only NumPy's arrays and scalars and the standard library's data \
                 types are decoded, \
                 and nothing is ever called",
                quote(&format!("{module}.{name}"))
            ),
        )
    }

    /// The items of an argument tuple (no allowed callee takes more than 3: a longer tuple
    /// is refused before anything is copied, so a memoised huge tuple costs nothing).
    fn args(&mut self, args: Value, at: u64, callee: &str, many: bool) -> Result<Args> {
        let n = match self.tuple_items(args) {
            Some(items) => items.len(),
            None => {
                return Err(self.err(
                    at,
                    format!("REDUCE calling {callee} needs an argument tuple, found {}", self.type_name(args)),
                ))
            }
        };
        if n > 4 && !many {
            return Err(self.err(at, format!("{callee} called with {n} arguments: not what NumPy or Python pickle")));
        }
        if n > 4 {
            // A path's parts: as many as the pickle holds, copied at a charge.
            self.charge(super::vec_cost::<Value>(n), at)?;
            return Ok(Args::Heap(self.tuple_items(args).unwrap_or_default().to_vec()));
        }
        let mut inline = [Value::None; 4];
        inline[..n].copy_from_slice(self.tuple_items(args).unwrap_or_default());
        Ok(Args::Inline(inline, n))
    }

    fn reduce(&mut self, callable: Value, args: Value, at: u64) -> Result<Value> {
        if let Some(Kind::ZoneUnpickle) = self.kind(callable) {
            return self.zone_info(args, at);
        }
        let Some(&Kind::Global(g)) = self.kind(callable) else {
            return Err(self.err(
                at,
                format!(
                    "REDUCE calling a {} is not allowed: only NumPy's and Python's own reconstructors are",
                    self.type_name(callable)
                ),
            ));
        };
        if let Global::Safe(i) = g {
            // A class the caller trusts: any arguments (checked as values already).
            if self.tuple_items(args).is_none() {
                let name = self.global_name(g);
                return Err(self.err(at, format!("REDUCE calling {name} needs an argument tuple")));
            }
            return self.node(Kind::Safe(i), at);
        }
        let callee = g.name();
        let args = self.args(args, at, callee, matches!(g, Global::Path(_)))?;
        let bad = |m: &Self| {
            let types: Vec<&str> = args.iter().map(|&a| m.type_name(a)).collect();
            m.err(at, format!("{callee} called with ({}): not what NumPy or Python pickle", types.join(", ")))
        };
        match g {
            Global::Reconstruct => {
                let [cls, shape, typecode] = args[..] else { return Err(bad(self)) };
                let cls_ok = matches!(self.kind(cls), Some(Kind::Global(Global::Ndarray)));
                // `_reconstruct(subtype, shape, dtype)` allocates `shape` before the state
                // replaces it: only what `ndarray.__reduce__` gives, `(0,)`, so that no
                // unpickler that builds what this check passes allocates more.
                let shape_ok = matches!(self.tuple_items(shape), Some([Value::Int(0)]));
                let code_ok = self.is_bytes(typecode) || self.str_text(typecode).is_some();
                if !(cls_ok && shape_ok && code_ok) {
                    return Err(bad(self));
                }
                self.node(Kind::Array(None), at)
            }
            Global::FromBuffer => {
                let [buf, dtype, shape, order] = args[..] else { return Err(bad(self)) };
                let Some(Kind::Dtype(node)) = self.kind(dtype) else { return Err(bad(self)) };
                let dtype = node.dtype.clone();
                let dims = self.tuple_items(shape).ok_or_else(|| bad(self))?;
                let shape: Option<Vec<usize>> = dims
                    .iter()
                    .map(|d| match d {
                        Value::Int(n) => usize::try_from(*n).ok(),
                        _ => None,
                    })
                    .collect();
                let shape = shape.filter(|s| s.len() <= crate::header::MAX_DIMS).ok_or_else(|| bad(self))?;
                let fortran = match self.str_text(order) {
                    Some("C") => false,
                    Some("F") => true,
                    _ => return Err(bad(self)),
                };
                // The buffer: bytes, or a bytearray (BYTEARRAY8 of a writable array).
                let data = match self.kind(buf) {
                    Some(Kind::Leaf(obj)) => match &**obj {
                        Object::ByteArray(b) => self.node(Kind::Bytes(b.clone()), at)?,
                        _ => return Err(bad(self)),
                    },
                    _ if self.is_bytes(buf) => buf,
                    _ => return Err(bad(self)),
                };
                let count = crate::header::element_count(&shape).map_err(|e| self.err(at, e.to_string()))?;
                let state = self.raw_state(shape, count, dtype, fortran, data, at)?;
                self.node(Kind::Array(Some(Box::new(state))), at)
            }
            Global::Dtype => {
                let [descr, align, copy] = args[..] else { return Err(bad(self)) };
                let flag = |v: Value| matches!(v, Value::Bool(_) | Value::Int(0 | 1));
                let Some(descr) = self.str_value(descr) else { return Err(bad(self)) };
                if !(flag(align) && flag(copy)) {
                    return Err(bad(self));
                }
                let descr = descr.to_string();
                self.reduce_dtype(&descr, at)
            }
            Global::Scalar => {
                let [dtype, data] = args[..] else { return Err(bad(self)) };
                // NumPy takes a str (a Python 2 pickle's, read as latin1) as its latin1 bytes.
                let latin1: Vec<u8>;
                let data = match (self.bytes_of(data), self.str_text(data)) {
                    (Some(data), _) => data,
                    (_, Some(text)) => {
                        let bytes: Option<Vec<u8>> = text.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect();
                        latin1 = bytes.ok_or_else(|| self.err(at, "numpy scalar data: a str beyond latin-1"))?;
                        &latin1[..]
                    }
                    _ => return Err(bad(self)),
                };
                let Some(Kind::Dtype(node)) = self.kind(dtype) else { return Err(bad(self)) };
                let Some(scalar) = node.scalar().filter(|s| plain_scalar(s.ty())) else {
                    // Kept as its dtype and bytes: datetime64, timedelta64, void, long double.
                    let dtype = node.dtype.clone();
                    if dtype.has_object() {
                        return Err(self.err(
                            at,
                            format!("a numpy scalar of dtype {} holds Python objects: refused", dtype.descr()),
                        ));
                    }
                    if data.len() != dtype.itemsize() {
                        return Err(self.err(
                            at,
                            format!(
                                "a numpy scalar of dtype {} needs {} bytes, found {}",
                                dtype.descr(),
                                dtype.itemsize(),
                                data.len()
                            ),
                        ));
                    }
                    let mut data = data.to_vec();
                    let dtype = to_native(dtype, &mut data);
                    let header = crate::header::Header { dtype, fortran_order: false, shape: Vec::new() };
                    let array = crate::array::DynArray::new(header, data).map_err(|e| self.err(at, e.to_string()))?;
                    let obj = Object::Scalar(Box::new(array));
                    self.charge(super::stdlib::leaf_cost(&obj), at)?;
                    return self.node(Kind::Leaf(Box::new(obj)), at);
                };
                let decoded = scalar_value(scalar, data).map_err(|e| self.err(at, e))?;
                match decoded {
                    Plain::Value(v) => Ok(v),
                    Plain::Str(s) => self.node(Kind::Str(s), at),
                    Plain::Bytes(b) => self.node(Kind::Bytes(b), at),
                    Plain::BigInt(t) => self.node(Kind::BigInt(t), at),
                    Plain::Complex(re, im) => self.node(Kind::Complex(re, im), at),
                }
            }
            Global::Complex => {
                let [re, im] = args[..] else { return Err(bad(self)) };
                let num = |v: Value| match v {
                    Value::Float(x) => Some(x),
                    Value::Int(i) => Some(i as f64),
                    _ => None,
                };
                let (Some(re), Some(im)) = (num(re), num(im)) else { return Err(bad(self)) };
                self.node(Kind::Complex(re, im), at)
            }
            Global::Bytes => {
                if !args.is_empty() {
                    return Err(bad(self));
                }
                self.node(Kind::Bytes(Vec::new()), at)
            }
            Global::Encode => {
                let [text, encoding] = args[..] else { return Err(bad(self)) };
                let (Some(text), Some(encoding)) = (self.str_text(text), self.str_text(encoding)) else {
                    return Err(bad(self));
                };
                if encoding != "latin1" && encoding != "latin-1" {
                    return Err(self.err(
                        at,
                        format!("_codecs.encode with encoding {}: only 'latin1' is decoded", quote(encoding)),
                    ));
                }
                let bytes: Option<Vec<u8>> = text.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect();
                let bytes = bytes.ok_or_else(|| self.err(at, "_codecs.encode of a str beyond latin-1"))?;
                self.node(Kind::Bytes(bytes), at)
            }
            Global::StringDtype => {
                // `(coerce,)` or `(coerce, na_object)`: the dtype's missing-value sentinel.
                let (coerce, na) = match args[..] {
                    [coerce] => (coerce, None),
                    [coerce, na] => (coerce, Some(na)),
                    _ => return Err(bad(self)),
                };
                let coerce = match coerce {
                    Value::Bool(b) => b,
                    Value::Int(n @ (0 | 1)) => n == 1,
                    _ => return Err(bad(self)),
                };
                if let Some(na) = na {
                    if !matches!(na, Value::None | Value::Float(_)) && self.str_text(na).is_none() {
                        return Err(self.err(
                            at,
                            format!(
                                "a StringDType whose na_object is of type {}: only None, a float (such as NaN) or a str \
                                 are decoded",
                                self.type_name(na)
                            ),
                        ));
                    }
                }
                self.node(Kind::StringDtype { coerce, na }, at)
            }
            Global::Ndarray => {
                Err(self.err(at, "REDUCE calling numpy.ndarray is not allowed (NumPy calls _reconstruct)"))
            }
            Global::GetAttr => {
                let is_unpickle = match args[..] {
                    [cls, name] => {
                        matches!(self.kind(cls), Some(Kind::Global(Global::ZoneInfo)))
                            && self.str_text(name) == Some("_unpickle")
                    }
                    _ => false,
                };
                if !is_unpickle {
                    return Err(self.err(
                        at,
                        "builtins.getattr is decoded only as getattr(zoneinfo.ZoneInfo, '_unpickle'), as a \
                         ZoneInfo pickles: getattr of anything else could reach any code",
                    ));
                }
                self.node(Kind::ZoneUnpickle, at)
            }
            Global::MaReconstruct => {
                // `_mareconstruct(subtype, baseclass, baseshape, basetype)` allocates
                // `baseshape`: only what `MaskedArray.__reduce__` gives, `(0,)` and 'b'.
                let ok = match args[..] {
                    [cls, base, shape, code] => {
                        matches!(self.kind(cls), Some(Kind::Global(Global::MaskedArray)))
                            && matches!(self.kind(base), Some(Kind::Global(Global::Ndarray)))
                            && matches!(self.tuple_items(shape), Some([Value::Int(0)]))
                            && (self.str_text(code) == Some("b") || self.bytes_of(code) == Some(b"b"))
                    }
                    _ => false,
                };
                if !ok {
                    return Err(self.err(
                        at,
                        "numpy.ma.core._mareconstruct is decoded only as _mareconstruct(numpy.ma.MaskedArray, \
                         numpy.ndarray, (0,), 'b'), as a masked array pickles",
                    ));
                }
                self.node(Kind::Masked(None), at)
            }
            _ => self.reduce_stdlib(g, &args, at),
        }
    }

    fn build(&mut self, target: Value, state: Value, at: u64) -> Result<()> {
        let Value::Node(index) = target else {
            return Err(self.err(
                at,
                format!(
                    "BUILD on a {} is not allowed: only numpy.dtype and numpy.ndarray are built",
                    self.type_name(target)
                ),
            ));
        };
        match self.kind(target) {
            Some(Kind::Dtype(node)) if !node.built => self.build_dtype(index, state, at),
            Some(Kind::NewUuid) => self.build_uuid(index, state, at),
            // An instance of a safe global: its own `__setstate__` takes any state.
            Some(Kind::Safe(_)) => Ok(()),
            Some(Kind::Masked(None)) => {
                let state = self.masked_state(state, at)?;
                let cost = super::alloc_cost(std::mem::size_of::<MaskedState>());
                self.charge(cost + super::vec_cost::<usize>(state.array.shape.len()), at)?;
                self.nodes[index as usize].kind = Kind::Masked(Some(Box::new(state)));
                Ok(())
            }
            Some(Kind::Masked(Some(_))) => Err(self.err(at, "BUILD applied twice to the same object")),
            Some(Kind::Array(None)) => {
                let state = self.array_state(state, at)?;
                let cost = super::alloc_cost(std::mem::size_of::<ArrayState>());
                self.charge(cost + super::vec_cost::<usize>(state.shape.len()), at)?;
                self.nodes[index as usize].kind = Kind::Array(Some(Box::new(state)));
                Ok(())
            }
            Some(Kind::Dtype(_) | Kind::Array(Some(_))) => Err(self.err(at, "BUILD applied twice to the same object")),
            _ => Err(self.err(
                at,
                format!(
                    "BUILD on a {} is not allowed: only numpy.dtype and numpy.ndarray are built",
                    self.type_name(target)
                ),
            )),
        }
    }

    /// An array's state: `(1, shape, dtype, is_fortran, values)` (or without the leading
    /// version, as NumPy also accepts).
    fn array_state(&mut self, state: Value, at: u64) -> Result<ArrayState> {
        let bad = || self.err(at, "a numpy.ndarray state other than (1, shape, dtype, is_fortran, list)");
        let Some(items) = self.tuple_items(state) else { return Err(bad()) };
        let (shape, dtype, fortran, data) = match items[..] {
            [Value::Int(1), shape, dtype, fortran, data] | [shape, dtype, fortran, data] => {
                (shape, dtype, fortran, data)
            }
            _ => return Err(bad()),
        };
        self.array_parts(shape, dtype, fortran, data, at)
    }

    /// The state of an ndarray (or a masked array's data) from its parts.
    fn array_parts(&mut self, shape: Value, dtype: Value, fortran: Value, data: Value, at: u64) -> Result<ArrayState> {
        let bad = || self.err(at, "a numpy.ndarray state other than (1, shape, dtype, is_fortran, list)");
        let Some(dims) = self.tuple_items(shape) else { return Err(bad()) };
        if dims.len() > crate::header::MAX_DIMS {
            return Err(self.err(at, format!("an ndarray of {} dimensions (at most 64)", dims.len())));
        }
        let shape: Vec<usize> = dims
            .iter()
            .map(|d| match d {
                Value::Int(n) => usize::try_from(*n).ok(),
                _ => None,
            })
            .collect::<Option<_>>()
            .ok_or_else(|| self.err(at, "an ndarray shape that is not a tuple of non-negative ints"))?;
        let count = crate::header::element_count(&shape).map_err(|e| self.err(at, e.to_string()))?;
        // `Some(na_object)` for a StringDType array, whose values are checked below.
        let mut strings = None;
        match self.kind(dtype) {
            Some(Kind::Dtype(node)) if node.scalar().is_some_and(|s| s.ty() == ScalarType::Object) => {}
            Some(Kind::StringDtype { coerce, na }) => strings = Some((*coerce, *na)),
            Some(Kind::Dtype(node)) => {
                let dtype = node.dtype.clone();
                let fortran = flag(fortran).ok_or_else(bad)?;
                return self.raw_state(shape, count, dtype, fortran, data, at);
            }
            _ => return Err(bad()),
        }
        let fortran = flag(fortran).ok_or_else(bad)?;
        let Value::Node(list) = data else { return Err(bad()) };
        let (len, items) = match self.kind(data) {
            Some(Kind::List(items)) => (items.len(), &items[..]),
            Some(&Kind::ListOf { len, strings: summary }) => {
                if let Some((_, na)) = strings {
                    let na_is_str = na.is_some_and(|na| self.str_text(na).is_some());
                    if !summary.all_strs_or(na, na_is_str) {
                        return Err(self
                            .err(at, "a StringDType array holding a value other than a str or the dtype's na_object"));
                    }
                }
                (len, &[][..])
            }
            _ if self.is_bytes(data) || self.str_text(data).is_some() => {
                return Err(
                    self.err(at, "an ndarray state with raw data: only object arrays (a list of values) are decoded")
                )
            }
            _ => return Err(bad()),
        };
        if len != count {
            return Err(self.err(
                at,
                format!(
                    "the ndarray's list holds {len} values, but its shape {} needs {count}",
                    crate::header::shape_repr(&shape)
                ),
            ));
        }
        if let Some((_, na)) = strings {
            self.check_strings(items, na, at)?;
        }
        Ok(ArrayState { shape, fortran, list, len, strings, raw: None })
    }

    /// A masked array's state: `(1, shape, dtype, is_fortran, data, mask, fill_value)`,
    /// its data as an ndarray's, its mask exactly one byte of 0 or 1 per element and
    /// field (the bytes `np.ma.make_mask_descr(dtype)` takes), its fill value `None` or a
    /// 0-d ndarray.
    fn masked_state(&mut self, state: Value, at: u64) -> Result<MaskedState> {
        let bad = |m: &Self| {
            m.err(at, "a numpy.ma.MaskedArray state other than (1, shape, dtype, is_fortran, data, mask, fill_value)")
        };
        let Some(items) = self.tuple_items(state) else { return Err(bad(self)) };
        let [Value::Int(1), shape, dtype, fortran, data, mask, fill] = items[..] else { return Err(bad(self)) };
        let array = self.array_parts(shape, dtype, fortran, data, at)?;
        if array.strings.is_some() {
            return Err(self.err(at, "a masked array of StringDType: not decoded"));
        }
        let count = crate::header::element_count(&array.shape).map_err(|e| self.err(at, e.to_string()))?;
        let per = match &array.raw {
            Some((dtype, _)) => mask_dtype(dtype)
                .ok_or_else(|| self.err(at, format!("a masked array of dtype {}: not decoded", dtype.descr())))?
                .itemsize(),
            None => 1,
        };
        let descr = array.raw.as_ref().map_or_else(|| "|O".to_string(), |(d, _)| d.descr());
        if !self.is_bytes(mask) {
            return Err(self.err(at, format!("a masked array whose mask is a {}, not bytes", self.type_name(mask))));
        }
        let want = count.checked_mul(per).map(|n| n as u64);
        let found = self.bytes_len(mask).unwrap_or(0);
        if want != Some(found) {
            return Err(self.err(
                at,
                format!(
                    "a masked array of shape {} and dtype {descr} needs a mask of {} bytes, found {found}",
                    crate::header::shape_repr(&array.shape),
                    want.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
                ),
            ));
        }
        let Some(bits) = self.bytes_of(mask) else {
            return Err(self.err(at, "a masked array's mask whose bytes were left out"));
        };
        if let Some(b) = bits.iter().find(|&&b| b > 1) {
            return Err(self.err(at, format!("a masked array's mask holding the byte {b}, not a bool (0 or 1)")));
        }
        // NumPy's setter converts the fill value to the data's dtype itself (a `'<U3'`
        // 'N/A' for `'<U2'` data, a `'<f8'` 1e20 for `'<f4'`, as NumPy pickles them).
        let fill_ok = match (fill, self.kind(fill)) {
            (Value::None, _) => true,
            (_, Some(Kind::Array(Some(f)))) => f.shape.is_empty() && f.strings.is_none(),
            _ => false,
        };
        if !fill_ok {
            return Err(self.err(
                at,
                format!(
                    "a masked array's fill_value that is a {}: only None or a 0-d ndarray are decoded",
                    self.type_name(fill)
                ),
            ));
        }
        Ok(MaskedState { array, mask, fill })
    }

    /// `getattr(ZoneInfo, '_unpickle')(key, from_cache)`: a `ZoneInfo` whose key is an
    /// IANA zone name (so no path it makes leaves the zone database) and `from_cache` 0
    /// or 1.
    fn zone_info(&mut self, args: Value, at: u64) -> Result<Value> {
        let bad = |m: &Self| m.err(at, "ZoneInfo._unpickle called with other than (key, from_cache)");
        let Some(&[key, from_cache]) = self.tuple_items(args) else { return Err(bad(self)) };
        let cached = match from_cache {
            Value::Int(0) => false,
            Value::Int(1) => true,
            _ => return Err(bad(self)),
        };
        let Some(key) = self.str_text(key) else { return Err(bad(self)) };
        let zone = crate::object::ZoneInfo { key: key.to_string(), cached };
        if !zone.is_valid() {
            let mut quoted = String::new();
            crate::repr::write_str(&zone.key.chars().take(80).collect::<String>(), &mut quoted);
            return Err(self.err(
                at,
                format!(
                    "a zoneinfo.ZoneInfo key {quoted} that is not an IANA zone name (parts of ASCII letters, \
                     digits, '_', '-', '+', each beginning with a letter): it could name a file outside the zone \
                     database"
                ),
            ));
        }
        let obj = Object::ZoneInfo(Box::new(zone));
        self.charge(super::stdlib::leaf_cost(&obj), at)?;
        self.node(Kind::Leaf(Box::new(obj)), at)
    }

    /// The state of an array of any dtype but object: its data must be bytes (or a Python
    /// 2 str, read as latin-1, as NumPy does) of exactly the size its shape and dtype say,
    /// and its dtype must hold no Python objects (a record with an `O` field).
    fn raw_state(
        &mut self,
        shape: Vec<usize>,
        count: usize,
        dtype: DType,
        fortran: bool,
        data: Value,
        at: u64,
    ) -> Result<ArrayState> {
        if dtype.has_object() {
            return Err(self.err(
                at,
                format!("an ndarray of dtype {} with raw data holds Python objects: refused", dtype.descr()),
            ));
        }
        let size = count.checked_mul(dtype.itemsize());
        let data = match self.is_bytes(data) {
            true => data,
            false => match self.byte_state(data).map(std::borrow::Cow::into_owned) {
                Some(bytes) => self.node(Kind::Bytes(bytes), at)?,
                None => {
                    return Err(self.err(
                        at,
                        format!(
                            "an ndarray of dtype {} whose data is a {}, not bytes",
                            dtype.descr(),
                            self.type_name(data)
                        ),
                    ))
                }
            },
        };
        let found = self.bytes_len(data).unwrap_or(0);
        if size.map(|s| s as u64) != Some(found) {
            return Err(self.err(
                at,
                format!(
                    "an ndarray of shape {} and dtype {} needs {} bytes of data, found {}",
                    crate::header::shape_repr(&shape),
                    dtype.descr(),
                    size.map_or_else(|| "more than 2^64".to_string(), |s| s.to_string()),
                    found
                ),
            ));
        }
        self.charge(super::alloc_cost(std::mem::size_of::<DType>()), at)?;
        Ok(ArrayState { shape, fortran, list: 0, len: 0, strings: None, raw: Some((Box::new(dtype), data)) })
    }

    /// The values of a StringDType array: each a str, or the dtype's `na_object` (a
    /// missing value), as NumPy pickles them.
    fn check_strings(&self, items: &[Value], na: Option<Value>, at: u64) -> Result<()> {
        let missing = |v: Value| match (v, na) {
            (Value::None, Some(Value::None)) => true,
            (Value::Float(x), Some(Value::Float(y))) => (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
            _ => false,
        };
        for (i, &v) in items.iter().enumerate() {
            if !(self.str_text(v).is_some() || missing(v)) {
                let allowed = match na {
                    None => "str (the dtype has no na_object)".to_string(),
                    Some(na) => format!("str or the dtype's na_object (of type {})", self.type_name(na)),
                };
                return Err(self.err(
                    at,
                    format!(
                        "element {i} (in C order) of a StringDType array is of type {}: only {allowed}",
                        self.type_name(v)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `np.ma.make_mask_descr(dtype)`: `|b1` for a scalar dtype, a record of them (packed,
/// titles dropped) for a record, subarrays of them for subarrays.
pub(crate) fn mask_dtype(dtype: &DType) -> Option<DType> {
    match dtype {
        DType::Scalar(_) => Some(DType::native(ScalarType::Bool)),
        DType::SubArray(sub) => DType::subarray(mask_dtype(sub.base())?, sub.shape().to_vec()).ok(),
        DType::Record(r) => {
            let mut offset = 0;
            let mut fields = Vec::with_capacity(r.fields().len());
            for f in r.fields() {
                let d = mask_dtype(&f.dtype)?;
                let size = d.itemsize();
                fields.push(crate::dtype::Field::new(f.name.clone(), d, offset));
                offset += size;
            }
            crate::dtype::Record::new(fields, offset).ok().map(DType::Record)
        }
    }
}

/// The dtype and data NumPy's `ndarray.__setstate__` (and `scalar()`) leave: a scalar
/// dtype of the other byte order is swapped into this machine's (records keep theirs).
pub(super) fn to_native(dtype: DType, data: &mut [u8]) -> DType {
    match dtype {
        DType::Scalar(s) if !s.is_native() && s.ty().swap_unit() > 0 => {
            crate::scalar::swap_units(data, s.ty().swap_unit());
            DType::Scalar(s.swapped())
        }
        other => other,
    }
}

/// A call's arguments: up to four in place (every callee's but a path's), more on the
/// heap; no allocation for the calls an array of a million inner arrays makes.
enum Args {
    Inline([Value; 4], usize),
    Heap(Vec<Value>),
}

impl std::ops::Deref for Args {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        match self {
            Args::Inline(values, n) => &values[..*n],
            Args::Heap(values) => values,
        }
    }
}

/// An ndarray's `is_fortran` flag.
fn flag(v: Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(b),
        Value::Int(0) => Some(false),
        Value::Int(1) => Some(true),
        _ => None,
    }
}

/// The dtypes of NumPy scalars decoded into plain values (and the object dtype itself).
fn plain_scalar(ty: ScalarType) -> bool {
    matches!(
        ty,
        ScalarType::Bool
            | ScalarType::Int(_)
            | ScalarType::UInt(_)
            | ScalarType::Float(2 | 4 | 8)
            | ScalarType::Complex(8 | 16)
            | ScalarType::Unicode(_)
            | ScalarType::Bytes(_)
            | ScalarType::Object
    )
}

/// A decoded NumPy scalar.
enum Plain {
    Value(Value),
    Str(String),
    Bytes(Vec<u8>),
    BigInt(String),
    Complex(f64, f64),
}

/// The plain value of `numpy._core.multiarray.scalar(dtype, data)`: the NumPy scalar type
/// is not kept (`np.float32(0.5)` gives the float `0.5`).
fn scalar_value(scalar: Scalar, data: &[u8]) -> std::result::Result<Plain, String> {
    let ty = scalar.ty();
    if ty == ScalarType::Object {
        return Err("a numpy.object_ scalar is not a plain value".to_string());
    }
    if data.len() != scalar.itemsize() {
        return Err(format!(
            "a numpy scalar of dtype {} needs {} bytes, found {}",
            scalar.type_str(),
            scalar.itemsize(),
            data.len()
        ));
    }
    // NumPy builds a bool scalar from its byte as it is: any nonzero byte is True.
    if ty == ScalarType::Bool {
        return Ok(Plain::Value(Value::Bool(data[0] != 0)));
    }
    let unsupported = || format!("numpy scalars of dtype {} are not supported", scalar.type_str());
    let decoded = scalar::decode(scalar, data).map_err(|e| match e {
        ScalarError::CodePoint { .. } => {
            "a numpy.str_ scalar holding a code unit that is not a Unicode scalar value".to_string()
        }
        _ => unsupported(),
    })?;
    Ok(match decoded {
        S::Str(text) => Plain::Str(text.into_owned()),
        S::Bytes(b) => Plain::Bytes(scalar::trim_nuls(b).to_vec()),
        number => match number.number().ok_or_else(unsupported)? {
            Number::Int(i) => Plain::Value(Value::Int(i)),
            Number::UInt(u) => match i64::try_from(u) {
                Ok(i) => Plain::Value(Value::Int(i)),
                Err(_) => Plain::BigInt(u.to_string()),
            },
            Number::Float(x) => Plain::Value(Value::Float(x)),
            Number::Complex(re, im) => Plain::Complex(re, im),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{decode_all, values};
    use crate::object::Object;

    #[test]
    fn numpy_scalars_of_each_byte_order() {
        let scalar = |descr: &str, order: &str, data: &[u8]| {
            let mut items = b"cnumpy.core.multiarray\nscalar\ncnumpy\ndtype\nU".to_vec();
            items.push(descr.len() as u8);
            items.extend_from_slice(descr.as_bytes());
            items.extend_from_slice(b"\x89\x88\x87R(K\x03U\x01");
            items.extend_from_slice(order.as_bytes());
            items.extend_from_slice(b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tbC");
            items.push(data.len() as u8);
            items.extend_from_slice(data);
            items.extend_from_slice(b"\x86R");
            values(1, &items).remove(0)
        };
        assert_eq!(scalar("f8", ">", &1.5f64.to_be_bytes()), Object::Float(1.5));
        assert_eq!(scalar("f8", "<", &1.5f64.to_le_bytes()), Object::Float(1.5));
        assert_eq!(scalar("i2", ">", &(-2i16).to_be_bytes()), Object::Int(-2));
        assert_eq!(scalar("i1", "|", &[0xfe]), Object::Int(-2));
        assert_eq!(scalar("u8", "<", &u64::MAX.to_le_bytes()), Object::BigInt(u64::MAX.to_string()));
        assert_eq!(
            scalar("c8", ">", &[1.0f32.to_be_bytes(), (-2.0f32).to_be_bytes()].concat()),
            Object::Complex(1.0, -2.0)
        );
        assert_eq!(scalar("U2", ">", &[0, 0, 0, b'a', 0, 0, 0, 0]), Object::from("a"));
        assert_eq!(scalar("f2", "<", &[0x00, 0x3c]), Object::Float(1.0));
        assert_eq!(scalar("b1", "|", &[2]), Object::Bool(true));
        assert_eq!(scalar("S3", "|", b"a\0\0"), Object::Bytes(b"a".to_vec()));
    }

    /// A StringDType array pickle (protocol 2 opcodes) of `n` elements: the dtype rebuilt
    /// from `args` (the argument tuple's opcodes), the values pushed by `items`.
    fn string_array(n: u8, args: &[u8], items: &[u8]) -> Vec<u8> {
        let mut p =
            b"\x80\x02cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85U\x01b\x87R(K\x01".to_vec();
        p.extend_from_slice(&[b'K', n, 0x85]);
        p.extend_from_slice(b"cnumpy._core._internal\n_convert_to_stringdtype_kwargs\n");
        p.extend_from_slice(args);
        p.extend_from_slice(b"R\x89](");
        p.extend_from_slice(items);
        p.extend_from_slice(b"etb.");
        p
    }

    fn strings(n: u8, args: &[u8], items: &[u8]) -> crate::error::Result<Vec<Object>> {
        let p = string_array(n, args, items);
        decode_all(&p).map(|d| d.items)
    }

    #[test]
    fn stringdtype_arrays_decode_to_their_strs_and_na_object() {
        let none = Object::None;
        assert_eq!(strings(2, b"K\x01\x85", b"U\x01aU\x00").unwrap(), ["a".into(), Object::from("")]);
        assert_eq!(strings(2, b"\x89\x85", b"U\x01aU\x01b").unwrap(), ["a".into(), Object::from("b")]);
        assert_eq!(strings(2, b"K\x01N\x86", b"NU\x01b").unwrap(), [none, "b".into()]);
        let nan = [b"G".as_slice(), &f64::NAN.to_be_bytes()].concat();
        let got = strings(2, &[b"K\x01", &nan[..], b"\x86"].concat(), &[b"U\x01a", &nan[..]].concat()).unwrap();
        assert!(matches!(got[..], [Object::Str(ref a), Object::Float(x)] if a == "a" && x.is_nan()), "{got:?}");
        // A str na_object: missing values are that str, as NumPy pickles them.
        assert_eq!(strings(1, b"K\x01U\x02NA\x86", b"U\x02NA").unwrap(), [Object::from("NA")]);
    }

    #[test]
    fn stringdtype_pickles_naming_anything_else_are_refused() {
        let err = |n, args: &[u8], items: &[u8]| strings(n, args, items).unwrap_err().to_string();
        // Values other than str and the na_object.
        let e = err(1, b"K\x01\x85", b"N");
        assert!(e.contains("element 0 (in C order) of a StringDType array is of type None: only str"), "{e}");
        let e = err(2, b"K\x01N\x86", b"U\x01aK\x05");
        assert!(e.contains("element 1 (in C order) of a StringDType array is of type int"), "{e}");
        let nan = [b"G".as_slice(), &f64::NAN.to_be_bytes()].concat();
        let e = err(1, b"K\x01N\x86", &nan);
        assert!(e.contains("is of type float: only str or the dtype's na_object (of type None)"), "{e}");
        // An na_object that is a class (pandas.NA) is a global never looked up.
        let e = err(1, b"K\x01cpandas\nNA\n\x86", b"U\x01a");
        assert!(e.contains("global 'pandas.NA' is not allowed"), "{e}");
        let e = err(1, b"K\x01K\x05\x86", b"U\x01a");
        assert!(e.contains("a StringDType whose na_object is of type int"), "{e}");
        let e = err(1, b"K\x01NN\x87", b"U\x01a");
        assert!(e.contains("_convert_to_stringdtype_kwargs called with (int, None, None)"), "{e}");
        let e = err(1, b"U\x01x\x85", b"U\x01a");
        assert!(e.contains("_convert_to_stringdtype_kwargs called with (str)"), "{e}");
        // Another function of the same module, or the name under another module.
        for (from, to) in [
            (&b"_convert_to_stringdtype_kwargs"[..], &b"_convert_to_stringdtype_kwargz"[..]),
            (b"numpy._core._internal", b"numpy._core._internaI"),
        ] {
            let mut p = string_array(1, b"K\x01\x85", b"U\x01a");
            let at = p.windows(from.len()).position(|w| w == from).unwrap();
            p[at..at + from.len()].copy_from_slice(to);
            let e = decode_all(&p).unwrap_err().to_string();
            assert!(e.contains("is not allowed: only NumPy's arrays and scalars"), "{e}");
        }
        // The dtype is not a value of the array.
        let e = err(1, b"K\x01\x85", b"cnumpy._core._internal\n_convert_to_stringdtype_kwargs\nK\x01\x85R");
        assert!(e.contains("of type numpy.dtypes.StringDType"), "{e}");
    }
}
