//! The standard library's data types in a pickle, interpreted and never called: `REDUCE`
//! of `datetime`'s classes on their byte states, `decimal.Decimal`, `fractions.Fraction`,
//! `bytearray`, `set`/`frozenset`, `collections.OrderedDict`/`Counter`, `pathlib`'s paths,
//! `range` and `slice`; `NEWOBJ` and `BUILD` of `uuid.UUID`; the set opcodes
//! (`EMPTY_SET`, `ADDITEMS`, `FROZENSET`) and `BYTEARRAY8`.
//!
//! Each constructor's arguments are checked to be exactly what CPython's own pickles give
//! and what the constructor accepts, so that CPython's unpickler, which calls them once
//! the check has passed, builds the same value without error and with memory bounded by
//! the pickle: `bytearray(10**12)`, a `Counter` of an int, a date with month 13 and a
//! `timedelta` beyond Python's range are refused here.

use super::budget::{alloc_cost, reserve, vec_cost};
use super::{Kind, Machine, PickleInput, Value};
use crate::error::Result;
use crate::object::pickle::opcode_name;
use crate::object::{Date, DateTime, Object, Time, TimeDelta, TzInfo};

/// Which mapping class a [`Kind::Mapping`] is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Mapping {
    OrderedDict,
    Counter,
    /// A `defaultdict`, and its factory: `None`, or a builtin class.
    DefaultDict(Option<super::Global>),
}

/// What the machine holds of a set while its items come.
#[derive(Debug)]
pub(in crate::object::pickle) struct SetNode {
    pub(in crate::object::pickle) items: Vec<Value>,
    pub(in crate::object::pickle) frozen: bool,
}

/// What [`Kind::Leaf`] takes of the budget: the value and the heap it holds.
pub(super) fn leaf_cost(obj: &Object) -> usize {
    let heap = match obj {
        Object::Decimal(s) | Object::BigInt(s) | Object::Str(s) => alloc_cost(s.len()),
        Object::ByteArray(b) | Object::Bytes(b) => alloc_cost(b.len()),
        Object::Path(_, parts) => {
            vec_cost::<String>(parts.len()) + parts.iter().map(|p| alloc_cost(p.len())).sum::<usize>()
        }
        Object::Fraction(p) => alloc_cost(2 * std::mem::size_of::<Object>()) + leaf_cost(&p.0) + leaf_cost(&p.1),
        Object::Range(r) => alloc_cost(3 * std::mem::size_of::<Object>()) + r.iter().map(leaf_cost).sum::<usize>(),
        Object::Scalar(a) | Object::Array(a) => {
            alloc_cost(std::mem::size_of::<crate::array::DynArray>()) + alloc_cost(a.data().len()) + 256
        }
        Object::Time(t) => alloc_cost(std::mem::size_of::<Time>()) + t.tzinfo.as_ref().map_or(0, tz_cost),
        Object::DateTime(t) => alloc_cost(std::mem::size_of::<DateTime>()) + t.time.tzinfo.as_ref().map_or(0, tz_cost),
        Object::TimeZone(tz) => {
            alloc_cost(std::mem::size_of::<crate::object::TimeZone>()) + tz_cost(&TzInfo::TimeZone((**tz).clone()))
        }
        Object::ZoneInfo(z) => alloc_cost(std::mem::size_of::<crate::object::ZoneInfo>()) + alloc_cost(z.key.len()),
        Object::Type(m, n) => alloc_cost(m.len()) + alloc_cost(n.len()),
        _ => 0,
    };
    alloc_cost(std::mem::size_of::<Object>()).saturating_add(heap)
}

fn tz_cost(tz: &TzInfo) -> usize {
    match tz {
        TzInfo::TimeZone(tz) => tz.name.as_ref().map_or(0, |n| alloc_cost(n.len())),
        TzInfo::ZoneInfo(z) => alloc_cost(z.key.len()),
    }
}

/// A `timedelta(days, seconds, microseconds)` normalised as Python normalises it, or
/// `None` beyond its range (`|days| > 999_999_999`).
fn timedelta(days: i64, seconds: i64, micros: i64) -> Option<TimeDelta> {
    let total = (i128::from(days) * 86_400 + i128::from(seconds)) * 1_000_000 + i128::from(micros);
    let per_day: i128 = 86_400 * 1_000_000;
    let d = total.div_euclid(per_day);
    let rest = total.rem_euclid(per_day);
    if d.abs() > 999_999_999 {
        return None;
    }
    Some(TimeDelta { days: d as i32, seconds: (rest / 1_000_000) as i32, microseconds: (rest % 1_000_000) as i32 })
}

/// Whether `text` is what `decimal.Decimal(text)` reads: a sign, digits with an optional
/// point and exponent, or `Infinity`/`Inf`/`NaN`/`sNaN` (with payload digits), with
/// surrounding whitespace and `_` between digits as Python allows.
pub(crate) fn is_decimal_text(text: &str) -> bool {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_prefix(['+', '-']).unwrap_or(&t);
    let digits =
        |s: &str| !s.is_empty() && s.split('_').all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()));
    if t == "inf" || t == "infinity" {
        return true;
    }
    if let Some(payload) = t.strip_prefix("snan").or_else(|| t.strip_prefix("nan")) {
        return payload.is_empty() || digits(payload);
    }
    let (mantissa, exponent) = match t.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (t, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((a, b)) => (a.is_empty() || digits(a)) && (b.is_empty() || digits(b)) && !(a.is_empty() && b.is_empty()),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

impl<R: PickleInput> Machine<R> {
    /// The bytes of a `bytes` value, or of a str as its latin-1 bytes (Python 2 pickles of
    /// dates and raw array data hold str, which CPython and NumPy read as latin-1).
    pub(super) fn byte_state(&self, v: Value) -> Option<std::borrow::Cow<'_, [u8]>> {
        if let Some(b) = self.bytes_of(v) {
            return Some(std::borrow::Cow::Borrowed(b));
        }
        let text = self.str_text(v)?;
        text.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect::<Option<Vec<u8>>>().map(std::borrow::Cow::Owned)
    }

    /// An int argument.
    fn small_int(v: Value) -> Option<i64> {
        match v {
            Value::Int(i) => Some(i),
            Value::Bool(b) => Some(i64::from(b)),
            _ => None,
        }
    }

    /// An int argument of any size, as an [`Object::Int`] or [`Object::BigInt`].
    fn int_object(&self, v: Value) -> Option<Object> {
        match (v, self.kind(v)) {
            (Value::Int(i), _) => Some(Object::Int(i)),
            (_, Some(Kind::BigInt(t))) => Some(Object::BigInt(t.clone())),
            _ => None,
        }
    }

    /// The `datetime.timezone` or `zoneinfo.ZoneInfo` a value is, if it is one (`None`
    /// for `None`, an error for anything else).
    fn tzinfo(&self, v: Option<Value>, at: u64) -> Result<Option<TzInfo>> {
        match v {
            None | Some(Value::None) => Ok(None),
            Some(v) => match self.kind(v) {
                Some(Kind::Leaf(obj)) => match &**obj {
                    Object::TimeZone(tz) => Ok(Some(TzInfo::TimeZone((**tz).clone()))),
                    Object::ZoneInfo(z) => Ok(Some(TzInfo::ZoneInfo((**z).clone()))),
                    _ => Err(self.err(at, "a tzinfo that is not a datetime.timezone or zoneinfo.ZoneInfo")),
                },
                _ => Err(self.err(
                    at,
                    format!(
                        "a tzinfo of type {}: only datetime.timezone and zoneinfo.ZoneInfo are decoded (other \
                         tzinfo classes run code of their own)",
                        self.type_name(v)
                    ),
                )),
            },
        }
    }

    /// A built value.
    fn leaf(&mut self, obj: Object, at: u64) -> Result<Value> {
        self.charge(leaf_cost(&obj), at)?;
        self.node(Kind::Leaf(Box::new(obj)), at)
    }

    /// `REDUCE` of a standard library class on `args`.
    pub(super) fn reduce_stdlib(&mut self, g: super::Global, args: &[Value], at: u64) -> Result<Value> {
        use super::Global as G;
        let callee = g.name();
        let bad = |m: &Self| {
            let types: Vec<&str> = args.iter().map(|&a| m.type_name(a)).collect();
            m.err(at, format!("{callee} called with ({}): not what Python pickles", types.join(", ")))
        };
        let obj = match g {
            G::Date => {
                let [state] = args[..] else { return Err(bad(self)) };
                let b = self.byte_state(state).ok_or_else(|| bad(self))?;
                let [hi, lo, month, day] = b[..] else { return Err(bad(self)) };
                let d = Date { year: u16::from_be_bytes([hi, lo]), month, day };
                if !d.is_valid() {
                    return Err(self.err(at, format!("datetime.date of {}-{}-{}: not a date", d.year, d.month, d.day)));
                }
                Object::Date(d)
            }
            G::Time | G::DateTime => {
                let (state, tz) = match args[..] {
                    [s] => (s, None),
                    [s, tz] => (s, Some(tz)),
                    _ => return Err(bad(self)),
                };
                let b = self.byte_state(state).ok_or_else(|| bad(self))?.into_owned();
                let tzinfo = self.tzinfo(tz, at)?;
                let time = |h: u8, rest: &[u8], fold: bool| Time {
                    hour: h,
                    minute: rest[0],
                    second: rest[1],
                    microsecond: u32::from_be_bytes([0, rest[2], rest[3], rest[4]]),
                    fold,
                    tzinfo: tzinfo.clone(),
                };
                let obj = match (g, &b[..]) {
                    (G::Time, [h, rest @ ..]) if rest.len() == 5 => {
                        Object::Time(Box::new(time(h & 0x7f, rest, *h > 0x7f)))
                    }
                    (G::DateTime, [hi, lo, m, d, h, rest @ ..]) if rest.len() == 5 => {
                        let date = Date { year: u16::from_be_bytes([*hi, *lo]), month: m & 0x7f, day: *d };
                        if !date.is_valid() {
                            return Err(self.err(at, "datetime.datetime state holding a date that is not one"));
                        }
                        Object::DateTime(Box::new(DateTime { date, time: time(*h, rest, *m > 0x7f) }))
                    }
                    _ => return Err(bad(self)),
                };
                let valid = match &obj {
                    Object::Time(t) => t.is_valid(),
                    Object::DateTime(dt) => dt.time.is_valid(),
                    _ => false,
                };
                if !valid {
                    return Err(self.err(at, format!("{callee} state holding a time of day that is not one")));
                }
                obj
            }
            G::TimeDelta => {
                let ints: Option<Vec<i64>> = args.iter().map(|&v| Self::small_int(v)).collect();
                let ints = ints.ok_or_else(|| bad(self))?;
                let (d, s, us) = match ints[..] {
                    [d] => (d, 0, 0),
                    [d, s] => (d, s, 0),
                    [d, s, us] => (d, s, us),
                    _ => return Err(bad(self)),
                };
                let td = timedelta(d, s, us)
                    .ok_or_else(|| self.err(at, "datetime.timedelta beyond Python's range (999999999 days)"))?;
                Object::TimeDelta(td)
            }
            G::TimeZone => {
                let (offset, name) = match args[..] {
                    [o] => (o, None),
                    [o, n] => (o, Some(n)),
                    _ => return Err(bad(self)),
                };
                let Some(Kind::Leaf(obj)) = self.kind(offset) else { return Err(bad(self)) };
                let Object::TimeDelta(offset) = **obj else { return Err(bad(self)) };
                let name = match name {
                    None => None,
                    Some(n) => Some(self.str_text(n).ok_or_else(|| bad(self))?.to_string()),
                };
                let tz = crate::object::TimeZone { offset, name };
                if !tz.is_valid() {
                    return Err(self.err(at, "datetime.timezone with an offset of a day or more"));
                }
                Object::TimeZone(Box::new(tz))
            }
            G::Decimal => {
                let [text] = args[..] else { return Err(bad(self)) };
                let text = self.str_text(text).ok_or_else(|| bad(self))?;
                if !is_decimal_text(text) {
                    return Err(self.err(at, format!("decimal.Decimal({}): not a decimal number", super::quote(text))));
                }
                Object::Decimal(text.to_string())
            }
            G::Fraction => {
                let (n, d) = match args[..] {
                    [n, d] => (self.int_object(n), self.int_object(d)),
                    [text] => {
                        let t = self.str_text(text).ok_or_else(|| bad(self))?;
                        let (n, d) = t.trim().split_once('/').unwrap_or((t.trim(), "1"));
                        let parse = |s: &str| match crate::object::bigint::parse_decimal(s.trim()) {
                            Ok(crate::object::bigint::Int::Small(i)) => Some(Object::Int(i)),
                            Ok(crate::object::bigint::Int::Big(t)) => Some(Object::BigInt(t)),
                            Err(_) => None,
                        };
                        (parse(n), parse(d))
                    }
                    _ => return Err(bad(self)),
                };
                let (Some(n), Some(d)) = (n, d) else { return Err(bad(self)) };
                Object::Fraction(Box::new(self.fraction(n, d, at)?))
            }
            G::ByteArray => match args[..] {
                [] => Object::ByteArray(Vec::new()),
                [data] if self.bytes_of(data).is_some() => {
                    Object::ByteArray(self.bytes_of(data).unwrap_or_default().to_vec())
                }
                [text, encoding] if matches!(self.str_text(encoding), Some("latin-1" | "latin1")) => {
                    let b = self.byte_state(text).filter(|_| self.str_text(text).is_some()).ok_or_else(|| bad(self))?;
                    Object::ByteArray(b.into_owned())
                }
                _ => {
                    return Err(self.err(
                        at,
                        "builtins.bytearray called with other than bytes (a size would allocate it, and is refused)",
                    ))
                }
            },
            G::Set | G::FrozenSet => {
                let items: Vec<Value> = match args[..] {
                    [] => Vec::new(),
                    [list] => match self.kind(list) {
                        Some(Kind::List(items)) => items.clone(),
                        Some(Kind::ListOf { .. }) => {
                            return Err(self.err(at, format!("{callee} of a list: only protocol 4 sets are checked")))
                        }
                        _ => return Err(bad(self)),
                    },
                    _ => return Err(bad(self)),
                };
                return self.make_set(items, g == G::FrozenSet, at);
            }
            G::OrderedDict => {
                if !args.is_empty() {
                    return Err(bad(self));
                }
                return self.node(Kind::Mapping { entries: Vec::new(), of: Mapping::OrderedDict }, at);
            }
            G::DefaultDict => {
                let factory = match args[..] {
                    [] | [Value::None] => None,
                    [f] => match self.kind(f) {
                        Some(&Kind::Global(g)) if g.is_factory() => Some(g),
                        _ => {
                            let what = match self.kind(f) {
                                Some(&Kind::Global(g)) => self.global_name(g),
                                _ => format!("a {}", self.type_name(f)),
                            };
                            return Err(self.err(
                                at,
                                format!(
                                    "a collections.defaultdict whose default_factory is {what}: only None or a builtin \
                                     class (list, dict, set, int, ...) is decoded, as any other factory runs code \
                                     when a missing key is read"
                                ),
                            ));
                        }
                    },
                    _ => return Err(bad(self)),
                };
                return self.node(Kind::Mapping { entries: Vec::new(), of: Mapping::DefaultDict(factory) }, at);
            }
            G::Deque => {
                // `deque.__reduce__`: `()`, or `((), maxlen)`; the items come by APPENDS.
                let empty = |m: &Self, v: Value| m.tuple_items(v).is_some_and(<[Value]>::is_empty);
                let maxlen = match args[..] {
                    [] => None,
                    [items] if empty(self, items) => None,
                    [items, Value::None] if empty(self, items) => None,
                    [items, Value::Int(n)] if empty(self, items) && n >= 0 => Some(n as u64),
                    _ => return Err(bad(self)),
                };
                self.charge(alloc_cost(std::mem::size_of::<crate::object::Deque>()), at)?;
                return self.node(Kind::Deque(Box::new((Vec::new(), maxlen))), at);
            }
            G::Counter => {
                let entries = match args[..] {
                    [] => Vec::new(),
                    [dict] => match self.dict_entries(dict) {
                        Some(entries) => entries.to_vec(),
                        None if self.dict_len(dict).is_some() => Vec::new(),
                        None => return Err(bad(self)),
                    },
                    _ => return Err(bad(self)),
                };
                self.charge(vec_cost::<(Value, Value)>(entries.len()), at)?;
                let depth = entries.iter().flat_map(|&(k, v)| [k, v]).collect::<Vec<_>>();
                let depth = self.depth_around(0, &depth, at)?;
                let v = self.node(Kind::Mapping { entries, of: Mapping::Counter }, at)?;
                if let Value::Node(i) = v {
                    self.nodes[i as usize].set_depth(depth);
                }
                return Ok(v);
            }
            G::Path(flavor) => {
                let parts: Option<Vec<String>> = args_all(self, args);
                let parts = parts.ok_or_else(|| bad(self))?;
                Object::Path(flavor, parts)
            }
            G::Range => {
                let ints: Option<Vec<Object>> = args.iter().map(|&v| self.int_object(v)).collect();
                let ints = ints.ok_or_else(|| bad(self))?;
                let [start, stop, step] = match ints.len() {
                    1 => [Object::Int(0), ints[0].clone(), Object::Int(1)],
                    2 => [ints[0].clone(), ints[1].clone(), Object::Int(1)],
                    3 => [ints[0].clone(), ints[1].clone(), ints[2].clone()],
                    _ => return Err(bad(self)),
                };
                if step == Object::Int(0) {
                    return Err(self.err(at, "range() with a step of 0"));
                }
                Object::Range(Box::new([start, stop, step]))
            }
            G::Slice => {
                let [start, stop, step] = match args[..] {
                    [stop] => [Value::None, stop, Value::None],
                    [a, b] => [a, b, Value::None],
                    [a, b, c] => [a, b, c],
                    _ => return Err(bad(self)),
                };
                let depth = self.depth_around(0, &[start, stop, step], at)?;
                self.charge(super::budget::alloc_cost(std::mem::size_of::<[Value; 3]>()), at)?;
                let v = self.node(Kind::Slice(Box::new([start, stop, step])), at)?;
                if let Value::Node(i) = v {
                    self.nodes[i as usize].set_depth(depth);
                }
                return Ok(v);
            }
            G::SafeUuid => {
                let [v] = args[..] else { return Err(bad(self)) };
                if !matches!(v, Value::None | Value::Int(0 | -1)) {
                    return Err(bad(self));
                }
                return self.node(Kind::SafeUuid, at);
            }
            _ => return Err(bad(self)),
        };
        self.leaf(obj, at)
    }

    /// A fraction in lowest terms with a positive denominator, as `Fraction(n, d)` makes
    /// it (parts beyond 128 bits must already be so: the machine has no big arithmetic).
    fn fraction(&self, n: Object, d: Object, at: u64) -> Result<(Object, Object)> {
        let small = |o: &Object| match o {
            Object::Int(i) => Some(i128::from(*i)),
            Object::BigInt(t) => t.parse::<i128>().ok(),
            _ => None,
        };
        match (small(&n), small(&d)) {
            (_, Some(0)) => Err(self.err(at, "fractions.Fraction with a zero denominator")),
            (Some(a), Some(b)) => {
                let g = gcd(a.unsigned_abs(), b.unsigned_abs());
                let sign = if b < 0 { -1 } else { 1 };
                let (a, b) = (a / g as i128 * sign, b / g as i128 * sign);
                let int = |v: i128| i64::try_from(v).map_or_else(|_| Object::BigInt(v.to_string()), Object::Int);
                Ok((int(a), int(b)))
            }
            _ if matches!(&d, Object::BigInt(t) if !t.starts_with('-')) => Ok((n, d)),
            _ => Err(self.err(at, "fractions.Fraction with parts beyond 128 bits and a negative denominator")),
        }
    }

    /// A set of `items` (all hashable, as Python requires).
    fn make_set(&mut self, items: Vec<Value>, frozen: bool, at: u64) -> Result<Value> {
        if let Some(&v) = items.iter().find(|&&v| !self.hashable(v)) {
            return Err(self.err(at, format!("a set item of type {}, which Python cannot hash", self.type_name(v))));
        }
        self.charge(vec_cost::<Value>(items.len()) + alloc_cost(std::mem::size_of::<SetNode>()), at)?;
        let depth = self.depth_around(0, &items, at)?;
        let v = self.node(Kind::Set(Box::new(SetNode { items, frozen })), at)?;
        if let Value::Node(i) = v {
            self.nodes[i as usize].set_depth(depth);
        }
        Ok(v)
    }

    /// `EMPTY_SET`, `ADDITEMS` (to the set below the mark), `FROZENSET` (of the marked
    /// values) and `BYTEARRAY8`.
    pub(super) fn set_op(&mut self, op: u8, at: u64) -> Result<()> {
        match op {
            super::super::EMPTY_SET => {
                let v = self.make_set(Vec::new(), false, at)?;
                self.push(v, at)
            }
            super::super::FROZENSET => {
                let items = self.pop_mark(at, op)?;
                let v = self.make_set(items, true, at)?;
                self.push(v, at)
            }
            super::super::ADDITEMS => {
                let from = self.end_mark(at, op)?;
                if from == 0 || from <= self.frame_start() {
                    return Err(self.err(at, "ADDITEMS needs a set below its MARK"));
                }
                let target = self.stack[from - 1];
                let Value::Node(i) = target else {
                    return Err(self.err(at, format!("ADDITEMS on a {}, not a set", self.type_name(target))));
                };
                if !matches!(self.kind(target), Some(Kind::Set(s)) if !s.frozen) {
                    return Err(self.err(at, format!("ADDITEMS on a {}, not a set", self.type_name(target))));
                }
                if let Some(&v) = self.stack[from..].iter().find(|&&v| !self.hashable(v)) {
                    return Err(
                        self.err(at, format!("a set item of type {}, which Python cannot hash", self.type_name(v)))
                    );
                }
                let depth = self.depth_around(usize::from(self.nodes[i as usize].depth()), &self.stack[from..], at)?;
                let pos = self.input.pos;
                let Kind::Set(set) = &mut self.nodes[i as usize].kind else { unreachable!("matched above") };
                let n = self.stack.len() - from;
                if !reserve(&mut set.items, n, &mut self.budget, pos) {
                    return Err(self.over(at));
                }
                set.items.extend_from_slice(&self.stack[from..]);
                self.nodes[i as usize].set_depth(depth);
                self.stack.truncate(from);
                Ok(())
            }
            super::super::BYTEARRAY8 => {
                let n = u64::from_le_bytes(self.input.array::<8>(at, op)?);
                let bytes = self.payload(n, at, op)?;
                let v = self.leaf(Object::ByteArray(bytes), at)?;
                self.push(v, at)
            }
            _ => Err(self.refused(op, at)),
        }
    }

    /// `NEWOBJ`: `cls.__new__(cls, *args)`, allowed only for `uuid.UUID` with no
    /// arguments (its state comes by `BUILD`).
    pub(super) fn newobj(&mut self, op: u8, at: u64) -> Result<()> {
        let args = self.pop(at, op)?;
        let cls = self.pop(at, op)?;
        let empty = self.tuple_items(args).is_some_and(<[Value]>::is_empty);
        match self.kind(cls) {
            Some(Kind::Global(super::Global::Uuid)) if empty => self.push_node(Kind::NewUuid, at),
            Some(&Kind::Global(super::Global::Safe(i))) if self.tuple_items(args).is_some() => {
                self.push_node(Kind::Safe(i), at)
            }
            _ => Err(self.err(
                at,
                format!(
                    "{} of a {} is not allowed: only uuid.UUID (and safe globals) are created this way",
                    opcode_name(op).unwrap_or("NEWOBJ"),
                    match self.kind(cls) {
                        Some(&Kind::Global(g)) => self.global_name(g),
                        _ => self.type_name(cls).to_string(),
                    }
                ),
            )),
        }
    }

    /// `BUILD` of a `uuid.UUID` made by `NEWOBJ`: its state `{'int': n}`, with
    /// `'is_safe'` too when it is known.
    pub(super) fn build_uuid(&mut self, index: u32, state: Value, at: u64) -> Result<()> {
        let bad = |m: &Self| m.err(at, "a uuid.UUID state other than {'int': int[, 'is_safe': SafeUUID]}");
        let Some(entries) = self.dict_entries(state).map(<[(Value, Value)]>::to_vec) else {
            return Err(bad(self));
        };
        let mut int = None;
        for (k, v) in entries {
            match self.str_text(k) {
                Some("int") => int = Some(v),
                Some("is_safe") if matches!(self.kind(v), Some(Kind::SafeUuid)) => {}
                _ => return Err(bad(self)),
            }
        }
        let value = match int.and_then(|v| self.int_object(v)) {
            Some(Object::Int(i)) => u128::try_from(i).ok(),
            Some(Object::BigInt(t)) => t.parse::<u128>().ok(),
            _ => None,
        };
        let value = value.ok_or_else(|| self.err(at, "a uuid.UUID whose int is not in 0..2**128"))?;
        let obj = Object::Uuid(value);
        self.charge(leaf_cost(&obj), at)?;
        self.nodes[index as usize].kind = Kind::Leaf(Box::new(obj));
        Ok(())
    }
}

/// The strs of `args`, if all are strs.
fn args_all<R: PickleInput>(m: &Machine<R>, args: &[Value]) -> Option<Vec<String>> {
    args.iter().map(|&v| m.str_text(v).map(str::to_string)).collect()
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error, values};
    use super::*;
    use crate::object::ZoneInfo;

    /// `REDUCE` of `module.name` on the argument opcodes `args` (a tuple is made of them).
    fn call(module: &str, name: &str, args: &[u8]) -> Vec<u8> {
        let mut p = format!("c{module}\n{name}\n(").into_bytes();
        p.extend_from_slice(args);
        p.extend_from_slice(b"tR");
        p
    }

    #[test]
    fn standard_library_values_decode_to_their_types() {
        let date = call("datetime", "date", b"C\x04\x07\xe4\x02\x1d");
        assert_eq!(values(1, &date), [Object::Date(Date { year: 2020, month: 2, day: 29 })]);
        let td = call("datetime", "timedelta", b"K\x00J\x90_\x01\x00K\x00");
        assert_eq!(values(1, &td)[0].to_string(), "datetime.timedelta(days=1, seconds=3600)");
        assert_eq!(values(1, &call("builtins", "bytearray", b"C\x02ab"))[0], Object::ByteArray(b"ab".to_vec()));
        assert_eq!(values(1, &call("__builtin__", "xrange", b"K\x05"))[0].to_string(), "range(0, 5)");
        assert_eq!(values(1, b"cbuiltins\nrange\n"), [Object::Type("builtins".into(), "range".into())]);
        assert_eq!(values(1, b"\x8f(K\x01K\x02\x90")[0].to_string(), "{1, 2}");
        assert_eq!(values(1, b"(K\x03\x91")[0].to_string(), "frozenset({3})");
        let od = [&call("collections", "OrderedDict", b"")[..], b"U\x01aK\x01s"].concat();
        assert_eq!(values(1, &od)[0].to_string(), "OrderedDict([('a', 1)])");
        let uuid = b"cuuid\nUUID\n)\x81}U\x03intK\x05sb";
        assert_eq!(values(1, uuid), [Object::Uuid(5)]);
    }

    #[test]
    fn constructors_get_only_what_python_pickles() {
        // Sizes that would allocate, and arguments a constructor would refuse or misread.
        let e = error(1, &call("builtins", "bytearray", b"J\xff\xff\xff\x7f"));
        assert!(e.contains("a size would allocate it"), "{e}");
        let e = error(1, &call("collections", "Counter", b"J\xff\xff\xff\x7f"));
        assert!(e.contains("collections.Counter called with (int)"), "{e}");
        let e = error(1, &call("datetime", "date", b"C\x04\x07\xe4\x0d\x01"));
        assert!(e.contains("not a date"), "{e}");
        let e = error(1, &call("datetime", "timedelta", b"J\xff\xff\xff\x7fJ\xff\xff\xff\x7f"));
        assert!(e.contains("beyond Python's range"), "{e}");
        let big = call("datetime", "timedelta", b"\x8a\x05\x00\xca\x9a\x3b\x01");
        assert!(error(1, &big).contains("beyond Python's range"));
        let e = error(1, &call("decimal", "Decimal", b"U\x04__1e"));
        assert!(e.contains("not a decimal number"), "{e}");
        assert!(error(1, &call("builtins", "range", b"K\x01K\x02K\x00")).contains("step of 0"));
        assert!(error(1, &call("fractions", "Fraction", b"K\x01K\x00")).contains("zero denominator"));
        // A tzinfo of any class but timezone and ZoneInfo runs code of its own.
        let dt = call("datetime", "datetime", b"C\x0a\x07\xe4\x01\x02\x00\x00\x00\x00\x00\x00czoneinfo\nZoneInfo\n");
        assert!(error(1, &dt).contains("a tzinfo of type global"));
        let dt = call("datetime", "datetime", b"C\x0a\x07\xe4\x01\x02\x00\x00\x00\x00\x00\x00cdateutil.tz\ntzutc\n");
        assert!(error(1, &dt).contains("global 'dateutil.tz.tzutc' is not allowed"));
        let dt = call("datetime", "datetime", b"C\x0a\x07\xe4\x01\x02\x00\x00\x00\x00\x00\x00U\x03UTC");
        assert!(error(1, &dt).contains("a tzinfo of type str"));
        // NEWOBJ of anything but UUID, and a UUID state beyond its range or with more keys.
        assert!(error(1, b"cdatetime\ndate\n)\x81").contains("NEWOBJ of a datetime.date is not allowed"));
        let e = error(1, b"cuuid\nUUID\n)\x81}U\x03intJ\xff\xff\xff\xffsb");
        assert!(e.contains("not in 0..2**128"), "{e}");
        let e = error(1, b"cuuid\nUUID\n)\x81}(U\x03intK\x05U\x01xK\x01ub");
        assert!(e.contains("a uuid.UUID state other than"), "{e}");
        // Sets of unhashable items, and a BYTEARRAY8 claiming more than the budget.
        assert!(error(1, b"\x8f(]\x90").contains("a set item of type list"));
        let e = error(1, b"\x96\xff\xff\xff\xff\xff\xff\x00\x00");
        assert!(e.contains("the pickle ends inside the argument of BYTEARRAY8"), "{e}");
    }

    /// `getattr(zoneinfo.ZoneInfo, '_unpickle')(key, from_cache)`, as a ZoneInfo pickles.
    fn zone(key: &[u8], from_cache: &[u8]) -> Vec<u8> {
        let mut p = b"cbuiltins\ngetattr\nczoneinfo\nZoneInfo\nU\x09_unpickle\x86R".to_vec();
        p.push(b'X');
        p.extend_from_slice(&(key.len() as u32).to_le_bytes());
        p.extend_from_slice(key);
        p.extend_from_slice(from_cache);
        p.extend_from_slice(b"\x86R");
        p
    }

    #[test]
    fn zones_are_iana_keys_and_getattr_is_only_zoneinfos() {
        let paris = ZoneInfo { key: "Europe/Paris".into(), cached: true };
        assert_eq!(values(1, &zone(b"Europe/Paris", b"K\x01")), [Object::ZoneInfo(Box::new(paris.clone()))]);
        let utc = values(1, &zone(b"UTC", b"K\x00"));
        assert_eq!(utc[0].repr(), "zoneinfo.ZoneInfo(key='UTC')");
        assert_eq!(utc[0], Object::ZoneInfo(Box::new(ZoneInfo { key: "UTC".into(), cached: false })));
        let state = b"C\x0a\x07\xe8\x03\x01\x0c\x00\x00\x00\x00\x00";
        let dt = values(1, &call("datetime", "datetime", &[&state[..], &zone(b"Europe/Paris", b"K\x01")].concat()));
        assert_eq!(dt[0].repr(), "datetime.datetime(2024, 3, 1, 12, 0, tzinfo=zoneinfo.ZoneInfo(key='Europe/Paris'))");
        assert_eq!(dt[0].str(), "2024-03-01 12:00:00");
        // Keys that could name a file outside the zone database, before anything is built.
        let long = "A".repeat(200);
        for key in [
            "../../../etc/passwd",
            "/etc/passwd",
            "Europe/../../../etc/passwd",
            ".",
            "..",
            "Europe/./Paris",
            "Europe//Paris",
            "Europe/Paris/",
            "Europe/Paris\0",
            "Europe\\Paris",
            "zone.tab",
            "-rf",
            "",
            &long,
        ] {
            let e = error(1, &zone(key.as_bytes(), b"K\x01"));
            assert!(e.contains("is not an IANA zone name"), "{key:?}: {e}");
        }
        let e = error(1, &zone(b"UTC", b"K\x02"));
        assert!(e.contains("ZoneInfo._unpickle called with other than (key, from_cache)"), "{e}");
        // getattr of anything but ZoneInfo's _unpickle could reach any code.
        for p in [
            &b"cbuiltins\ngetattr\nczoneinfo\nZoneInfo\nU\x08__init__\x86R"[..],
            b"cbuiltins\ngetattr\ncpathlib\nPurePosixPath\nU\x07__new__\x86R",
            b"cbuiltins\ngetattr\nU\x02osU\x06system\x86R",
            b"cbuiltins\ngetattr\nczoneinfo\nZoneInfo\nU\x09_unpickle\x86R",
        ] {
            let e = error(1, p);
            let ok = e.contains("decoded only as getattr(zoneinfo.ZoneInfo, '_unpickle')") || e.contains("method");
            assert!(ok, "{e}");
        }
        assert!(error(1, &call("zoneinfo", "ZoneInfo", b"U\x03UTC")).contains("zoneinfo.ZoneInfo called with (str)"));
    }

    #[test]
    fn deques_and_defaultdicts_get_only_what_python_pickles() {
        let d = values(1, &[&call("collections", "deque", b")K\x03")[..], b"(K\x01K\x02e"].concat());
        assert_eq!(d[0].repr(), "deque([1, 2], maxlen=3)");
        assert_eq!(values(1, &call("collections", "deque", b""))[0].repr(), "deque([])");
        let e = error(1, &[&call("collections", "deque", b")K\x01")[..], b"(K\x01K\x02e"].concat());
        assert!(e.contains("a collections.deque of maxlen 1 given more items"), "{e}");
        for args in [&b"]K\x01"[..], b")J\xff\xff\xff\xff", b"K\x05", b"(K\x01tK\x01"] {
            let e = error(1, &call("collections", "deque", args));
            assert!(e.contains("collections.deque called with"), "{e}");
        }
        let dd = [&call("collections", "defaultdict", b"cbuiltins\nlist\n")[..], b"K\x01]s"].concat();
        assert_eq!(values(1, &dd)[0].repr(), "defaultdict(<class 'list'>, {1: []})");
        assert_eq!(values(1, &call("collections", "defaultdict", b"N"))[0].repr(), "defaultdict(None, {})");
        // A factory runs when a missing key is read: only builtin classes pass.
        let e = error(1, &call("collections", "defaultdict", b"cos\nsystem\n"));
        assert!(e.contains("global 'os.system' is not allowed"), "{e}");
        for (factory, name) in [
            (&b"ccollections\nOrderedDict\n"[..], "collections.OrderedDict"),
            (b"cdatetime\ndate\n", "datetime.date"),
            (b"cbuiltins\ngetattr\n", "builtins.getattr"),
            (b"cbuiltins\nrange\n", "builtins.range"),
            (b"U\x04eval", "a str"),
            (b"cbuiltins\ngetattr\nczoneinfo\nZoneInfo\nU\x09_unpickle\x86R", "a method"),
        ] {
            let e = error(1, &call("collections", "defaultdict", factory));
            assert!(e.contains(&format!("default_factory is {name}: only None or a builtin")), "{e}");
        }
        assert!(error(1, &call("collections", "defaultdict", b"NN")).contains("collections.defaultdict called with"));
        // Neither is a key Python can hash.
        let key = [&b"}"[..], &call("collections", "deque", b""), b"K\x01s"].concat();
        assert!(error(1, &key).contains("a dict key of type collections.deque"));
    }

    /// `_mareconstruct(MaskedArray, ndarray, (0,), 'b')` built with the state `(1, (3,),
    /// int64, False, data, mask, fill)`.
    fn masked(data: &[u8], mask: &[u8], fill: &[u8]) -> Vec<u8> {
        let mut p =
            b"cnumpy.ma.core\n_mareconstruct\n(cnumpy.ma\nMaskedArray\ncnumpy\nndarray\nK\x00\x85U\x01btR".to_vec();
        p.extend_from_slice(b"(K\x01K\x03\x85cnumpy\ndtype\nU\x02i8K\x00K\x01\x87R");
        p.extend_from_slice(b"(K\x03U\x01<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb\x89");
        p.extend_from_slice(data);
        p.extend_from_slice(mask);
        p.extend_from_slice(fill);
        p.extend_from_slice(b"tb");
        p
    }

    #[test]
    fn masked_arrays_need_a_mask_that_tells_the_truth() {
        let data = [&b"C\x18"[..], &[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]].concat();
        let m = values(1, &masked(&data, b"C\x03\x00\x01\x00", b"N"));
        let Object::MaskedArray(m) = &m[0] else { panic!("{m:?}") };
        assert_eq!(m.masked(), [false, true, false]);
        assert_eq!(m.fill_value, None);
        assert_eq!(
            Object::MaskedArray(m.clone()).repr(),
            "masked_array(data=array([1, 2, 3]), mask=array([False,  True, False]))"
        );
        // (data, mask, fill_value, the error)
        type Case<'a> = (&'a [u8], &'a [u8], &'a [u8], &'a str);
        let cases: [Case<'_>; 8] = [
            (&data, b"C\x02\x00\x01", b"N", "needs a mask of 3 bytes, found 2"),
            (&data, b"C\x04\x00\x01\x00\x00", b"N", "needs a mask of 3 bytes, found 4"),
            (&data, b"C\x03\x00\x02\x00", b"N", "holding the byte 2, not a bool"),
            (&data, b"]", b"N", "whose mask is a list, not bytes"),
            (&data, b"N", b"N", "whose mask is a None, not bytes"),
            (&data[..data.len() - 1], b"C\x03\x00\x01\x00", b"N", "needs 24 bytes of data, found 23"),
            (&data, b"C\x03\x00\x01\x00", b"U\x01x", "fill_value that is a str"),
            (&data, b"C\x03\x00\x01\x00", b"cos\nsystem\nU\x04trueR", "global 'os.system' is not allowed"),
        ];
        for (data, mask, fill, want) in cases {
            let mut data = data.to_vec();
            if data.len() == 25 {
                data[1] = 23;
            }
            let e = error(1, &masked(&data, mask, fill));
            assert!(e.contains(want), "{want}: {e}");
        }
        // _mareconstruct of other classes, or of a shape it would allocate.
        for args in [
            &b"cnumpy\nndarray\ncnumpy\nndarray\nK\x00\x85U\x01b"[..],
            b"cnumpy.ma\nMaskedArray\ncnumpy.ma\nMaskedArray\nK\x00\x85U\x01b",
            b"cnumpy.ma\nMaskedArray\ncnumpy\nndarray\nJ\x00\xca\x9a\x3b\x85U\x01b",
            b"cnumpy.ma\nMaskedArray\ncnumpy\nndarray\nK\x00\x85U\x01O",
        ] {
            let e = error(1, &call("numpy.ma.core", "_mareconstruct", args));
            assert!(e.contains("decoded only as _mareconstruct(numpy.ma.MaskedArray"), "{e}");
        }
        // A state without the mask and fill value.
        let short =
            b"cnumpy.ma.core\n_mareconstruct\n(cnumpy.ma\nMaskedArray\ncnumpy\nndarray\nK\x00\x85U\x01btR(K\x01tb";
        assert!(error(1, short).contains("a numpy.ma.MaskedArray state other than"));
    }

    /// `_reconstruct(ndarray, shape, b'b')` allocates `shape` before its state replaces
    /// it, in any unpickler that builds what the check passed: only `(0,)` passes, as
    /// `ndarray.__reduce__` writes it (the 2**30 and 2**40 element bases are refused).
    #[test]
    fn reconstruct_allocates_only_an_empty_base() {
        for shape in [
            &b"J\x00\x00\x00\x40\x85"[..],
            b"\x8a\x06\x00\x00\x00\x00\x00\x01\x85",
            b"K\x00K\x00\x86",
            b")",
            b"K\x01\x85",
        ] {
            let args = [&b"cnumpy\nndarray\n"[..], shape, b"C\x01b"].concat();
            let e = error(1, &call("numpy.core.multiarray", "_reconstruct", &args));
            assert!(e.contains("numpy._core.multiarray._reconstruct called with ("), "{e}");
        }
    }

    #[test]
    fn arrays_inside_must_be_exactly_their_bytes_and_hold_no_objects() {
        // _reconstruct(ndarray, (0,), b'b') with state (1, shape, dtype, False, data).
        let inner = |shape: &[u8], descr: &[u8], data: &[u8]| {
            let mut p = b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R(K\x01".to_vec();
            p.extend_from_slice(shape);
            p.extend_from_slice(b"cnumpy\ndtype\nU");
            p.push(descr.len() as u8);
            p.extend_from_slice(descr);
            p.extend_from_slice(b"\x89\x88\x87R(K\x03U\x01<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb\x89");
            p.extend_from_slice(data);
            p.extend_from_slice(b"tb");
            p
        };
        let ok = inner(b"K\x02\x85", b"i2", b"C\x04\x01\x00\x02\x00");
        let Object::Array(a) = &values(1, &ok)[0] else { panic!("not an array") };
        assert_eq!((a.dtype().descr(), a.shape(), a.data()), ("'<i2'".to_string(), &[2][..], &[1, 0, 2, 0][..]));
        // A shape that lies about the data's size, either way.
        let e = error(1, &inner(b"K\x03\x85", b"i2", b"C\x04\x01\x00\x02\x00"));
        assert!(e.contains("needs 6 bytes of data, found 4"), "{e}");
        let e = error(1, &inner(b"J\xff\xff\xff\x7fJ\xff\xff\xff\x7f\x86", b"i2", b"C\x04\x01\x00\x02\x00"));
        assert!(e.contains("bytes of data, found 4"), "{e}");
        // Object dtypes with raw bytes (pointers, to NumPy) and data of another type.
        let e = error(1, &inner(b"K\x01\x85", b"O8", b"C\x08\x00\x00\x00\x00\x00\x00\x00\x00"));
        assert!(e.contains("an ndarray state with raw data: only object arrays"), "{e}");
        let e = error(1, &inner(b"K\x01\x85", b"i2", b"K\x05"));
        assert!(e.contains("whose data is a int, not bytes"), "{e}");
    }

    #[test]
    fn safe_globals_pass_the_check_alone_and_never_decode() {
        use super::super::tests::wrap;
        use crate::object::{check_pickle_with, from_pickle_with};
        let options = crate::ReadOptions::new().safe_globals([("geo", "Point")]).clone();
        let point = |args: &[u8]| wrap(1, &[&b"cgeo\nPoint\n("[..], args, b"tR"].concat());
        assert_eq!(check_pickle_with(&point(b"K\x01K\x02"), &options).unwrap(), [1]);
        // NEWOBJ and BUILD with any state, as dataclasses pickle.
        let newobj = wrap(1, b"cgeo\nPoint\n)\x81}U\x01xK\x01sb");
        assert_eq!(check_pickle_with(&newobj, &options).unwrap(), [1]);
        // Its arguments are values like any other: a global among them is still refused.
        let e = check_pickle_with(&point(b"cos\nsystem\n"), &options).unwrap_err().to_string();
        assert!(e.contains("global 'os.system' is not allowed"), "{e}");
        // Only the names given, and never without them.
        let e = check_pickle_with(&wrap(1, b"cgeo\nLine\n)R"), &options).unwrap_err().to_string();
        assert!(e.contains("global 'geo.Line' is not allowed"), "{e}");
        assert!(check_pickle_with(&point(b"K\x01"), &crate::ReadOptions::new()).is_err());
        // Rust values cannot hold them.
        let e = from_pickle_with(&point(b"K\x01"), &options).unwrap_err().to_string();
        assert!(e.contains("an instance of the safe global geo.Point is built only by an unpickler"), "{e}");
    }

    #[test]
    fn decimal_texts_follow_python() {
        for ok in ["1.50", "-0", "1e5", "1E+5", ".5", "5.", "Infinity", "-inf", "NaN", "sNaN12", " 7 ", "1_000.5"] {
            assert!(is_decimal_text(ok), "{ok}");
        }
        for bad in ["", ".", "1e", "e5", "abc", "1..2", "nan.5", "1__0", "0x10", "1e5.5"] {
            assert!(!is_decimal_text(bad), "{bad}");
        }
    }

    #[test]
    fn timedeltas_normalise_as_python() {
        assert_eq!(timedelta(0, 90_000, 0), Some(TimeDelta { days: 1, seconds: 3600, microseconds: 0 }));
        assert_eq!(timedelta(0, -1, 0), Some(TimeDelta { days: -1, seconds: 86_399, microseconds: 0 }));
        assert_eq!(timedelta(0, 0, -1), Some(TimeDelta { days: -1, seconds: 86_399, microseconds: 999_999 }));
        assert_eq!(timedelta(1_000_000_000, 0, 0), None);
    }
}
