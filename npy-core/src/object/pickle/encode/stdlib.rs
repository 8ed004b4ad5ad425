//! `save()` of the standard library's values as CPython 3.11 pickles them under protocol 4:
//! what each type's `__reduce_ex__(4)` gives, saved by `save_reduce`.
//!
//! | value | pickle |
//! |---|---|
//! | `bytearray` | `bytearray(bytes)`, or `bytearray()` when empty |
//! | `set` | `EMPTY_SET`, then `ADDITEMS` batches of 1000 (one more, empty, after a full one) |
//! | `frozenset` | `MARK`, the items, `FROZENSET` |
//! | `OrderedDict` | `OrderedDict()`, then its items as `batch_dict` writes an iterator's |
//! | `Counter` | `Counter(dict)` |
//! | `date`, `time`, `datetime` | the class of the state bytes (and the `tzinfo`); `fold` in the high bit of the month (datetime) or hour (time) |
//! | `timedelta` | `timedelta(days, seconds, microseconds)` |
//! | `timezone` | `timezone(offset)` or `timezone(offset, name)`; `timezone.utc` is one object |
//! | `ZoneInfo` | `getattr(ZoneInfo, '_unpickle')(key, from_cache)`; a cached zone is one object per key |
//! | `deque` | `deque(())` or `deque((), maxlen)`, then its items as `batch_list` writes an iterator's |
//! | `defaultdict` | `defaultdict()` or `defaultdict(factory)`, then its items as `batch_dict` writes an iterator's |
//! | `Decimal` | `Decimal(str)` |
//! | `Fraction` | `Fraction(numerator, denominator)` |
//! | `UUID` | `NEWOBJ` of `UUID` and `()`, then `BUILD` with `{'int': value}` |
//! | `pathlib` paths | the class of the parts (`'/'`, `'a'`, ...), interned but for the anchor |
//! | `range`, `slice` | the class of `(start, stop, step)` |
//! | a class | its global |
//!
//! The names of C types (`datetime.date`, `decimal.Decimal`, `collections.OrderedDict`,
//! `builtins.range`...) are made anew by each lookup, those of Python classes (`Counter`,
//! `Fraction`, `UUID`, `pathlib`'s) are interned: only the latter are shared with other
//! interned strs (module names, `pathlib` parts). See [`Names`] for module names.

use super::{
    check_keys, Encoder, Names, Saved, ADDITEMS, BATCH, BUILD, EMPTY_DICT, EMPTY_SET, EMPTY_TUPLE, FROZENSET, MARK,
    NEWOBJ, SETITEM, SETITEMS,
};
use crate::object::bigint::{self, Int};
use crate::object::{
    Date, DateTime, DefaultDict, Deque, Object, PathFlavor, Time, TimeDelta, TimeZone, TzInfo, ZoneInfo,
};

/// A global: module, name, and which of them CPython shares.
type Global = (&'static str, &'static str, Names);

const BYTEARRAY: Global = ("builtins", "bytearray", Names::C);
const ORDERED_DICT: Global = ("collections", "OrderedDict", Names::C);
const COUNTER: Global = ("collections", "Counter", Names::PythonStartup);
const DATE: Global = ("datetime", "date", Names::C);
const TIME: Global = ("datetime", "time", Names::C);
const DATETIME: Global = ("datetime", "datetime", Names::C);
const TIMEDELTA: Global = ("datetime", "timedelta", Names::C);
const TIMEZONE: Global = ("datetime", "timezone", Names::C);
const DECIMAL: Global = ("decimal", "Decimal", Names::C);
const FRACTION: Global = ("fractions", "Fraction", Names::Python);
const UUID: Global = ("uuid", "UUID", Names::Python);
const RANGE: Global = ("builtins", "range", Names::C);
const SLICE: Global = ("builtins", "slice", Names::C);
const DEQUE: Global = ("collections", "deque", Names::C);
const DEFAULTDICT: Global = ("collections", "defaultdict", Names::C);
const GETATTR: Global = ("builtins", "getattr", Names::CFunction);
const ZONEINFO: Global = ("zoneinfo", "ZoneInfo", Names::C);

/// The classes an [`Object::Type`] may name: those whose instances object arrays hold.
const CLASSES: [Global; 30] = [
    ("builtins", "list", Names::C),
    ("builtins", "dict", Names::C),
    ("builtins", "tuple", Names::C),
    ("builtins", "int", Names::C),
    ("builtins", "float", Names::C),
    ("builtins", "str", Names::C),
    ("builtins", "bool", Names::C),
    DEQUE,
    DEFAULTDICT,
    ("builtins", "complex", Names::C),
    ("builtins", "bytes", Names::C),
    BYTEARRAY,
    ("builtins", "set", Names::C),
    ("builtins", "frozenset", Names::C),
    RANGE,
    SLICE,
    ORDERED_DICT,
    COUNTER,
    DATE,
    TIME,
    DATETIME,
    TIMEDELTA,
    TIMEZONE,
    DECIMAL,
    FRACTION,
    UUID,
    ("pathlib", "PurePosixPath", Names::Python),
    ("pathlib", "PureWindowsPath", Names::Python),
    ("pathlib", "PosixPath", Names::Python),
    ("pathlib", "WindowsPath", Names::Python),
];

impl Encoder {
    pub(super) fn save_bytearray(&mut self, data: &[u8]) -> Saved {
        if data.is_empty() {
            return self.save_reduce(BYTEARRAY, 0, |_| Ok(()));
        }
        self.save_reduce(BYTEARRAY, 1, |e| {
            e.save_bytes_shared(data);
            Ok(())
        })
    }

    /// `save_set`: the items in batches, a full batch followed by another.
    pub(super) fn save_set(&mut self, items: &[Object], depth: usize) -> Saved {
        check_keys(items, "a set item")?;
        self.boundary();
        self.op(EMPTY_SET);
        self.memoize();
        if items.is_empty() {
            return Ok(());
        }
        let mut rest = items;
        loop {
            let (batch, tail) = rest.split_at(rest.len().min(BATCH));
            self.op(MARK);
            for v in batch {
                self.object(v, depth + 1)?;
            }
            self.op(ADDITEMS);
            rest = tail;
            if batch.len() < BATCH {
                return Ok(());
            }
        }
    }

    pub(super) fn save_frozenset(&mut self, items: &[Object], depth: usize) -> Saved {
        check_keys(items, "a frozenset item")?;
        self.boundary();
        self.op(MARK);
        for v in items {
            self.object(v, depth + 1)?;
        }
        self.op(FROZENSET);
        self.memoize();
        Ok(())
    }

    /// `OrderedDict.__reduce__`: the class called with `()`, its items from an iterator
    /// (`batch_dict`: one item alone is a `SETITEM`, and no empty batch follows a full one).
    pub(super) fn save_ordered_dict(&mut self, entries: &[(Object, Object)], depth: usize) -> Saved {
        check_keys(entries.iter().map(|(k, _)| k), "an OrderedDict key")?;
        self.save_reduce(ORDERED_DICT, 0, |_| Ok(()))?;
        for batch in entries.chunks(BATCH) {
            if let [(k, v)] = batch {
                self.object(k, depth + 1)?;
                self.object(v, depth + 1)?;
                self.op(SETITEM);
                continue;
            }
            self.op(MARK);
            for (k, v) in batch {
                self.object(k, depth + 1)?;
                self.object(v, depth + 1)?;
            }
            self.op(SETITEMS);
        }
        Ok(())
    }

    /// `Counter.__reduce__`: the class called with a `dict` of the counts.
    pub(super) fn save_counter(&mut self, entries: &[(Object, Object)], depth: usize) -> Saved {
        check_keys(entries.iter().map(|(k, _)| k), "a Counter key")?;
        // The dict is the Counter's own level: its items are one level down, as a dict's.
        self.save_reduce(COUNTER, 1, |e| e.save_dict(entries, depth))
    }

    pub(super) fn save_date(&mut self, d: &Date) -> Saved {
        if !d.is_valid() {
            return Err(format!("{d} is not a valid date"));
        }
        let [y0, y1] = d.year.to_be_bytes();
        self.save_reduce(DATE, 1, |e| {
            e.save_bytes(&[y0, y1, d.month, d.day]);
            Ok(())
        })
    }

    pub(super) fn save_time(&mut self, t: &Time) -> Saved {
        check_time(t, || t.to_string())?;
        let [_, u0, u1, u2] = t.microsecond.to_be_bytes();
        let state = [t.hour | if t.fold { 0x80 } else { 0 }, t.minute, t.second, u0, u1, u2];
        self.save_reduce(TIME, if t.tzinfo.is_some() { 2 } else { 1 }, |e| {
            e.save_bytes(&state);
            t.tzinfo.as_ref().map_or(Ok(()), |tz| e.save_tzinfo(tz))
        })
    }

    pub(super) fn save_datetime(&mut self, dt: &DateTime) -> Saved {
        let (d, t) = (&dt.date, &dt.time);
        if !d.is_valid() {
            return Err(format!("{dt} is not a valid datetime"));
        }
        check_time(t, || dt.to_string())?;
        let [y0, y1] = d.year.to_be_bytes();
        let [_, u0, u1, u2] = t.microsecond.to_be_bytes();
        let month = d.month | if t.fold { 0x80 } else { 0 };
        let state = [y0, y1, month, d.day, t.hour, t.minute, t.second, u0, u1, u2];
        self.save_reduce(DATETIME, if t.tzinfo.is_some() { 2 } else { 1 }, |e| {
            e.save_bytes(&state);
            t.tzinfo.as_ref().map_or(Ok(()), |tz| e.save_tzinfo(tz))
        })
    }

    pub(super) fn save_timedelta(&mut self, td: &TimeDelta) -> Saved {
        if !td.is_valid() {
            return Err(format!(
                "timedelta(days={}, seconds={}, microseconds={}) is not normalised as Python keeps it",
                td.days, td.seconds, td.microseconds
            ));
        }
        self.save_reduce(TIMEDELTA, 3, |e| {
            for v in [td.days, td.seconds, td.microseconds] {
                e.save_int(i64::from(v));
            }
            Ok(())
        })
    }

    fn save_tzinfo(&mut self, tz: &TzInfo) -> Saved {
        match tz {
            TzInfo::TimeZone(tz) => self.save_timezone(tz),
            TzInfo::ZoneInfo(zone) => self.save_zoneinfo(zone),
        }
    }

    /// A `ZoneInfo`: `ZoneInfo.__reduce__` gives `(ZoneInfo._unpickle, (key,
    /// from_cache))`, the bound method pickled as `getattr(ZoneInfo, '_unpickle')`. A
    /// cached zone is one object per key, memoised once.
    pub(super) fn save_zoneinfo(&mut self, zone: &ZoneInfo) -> Saved {
        if !zone.is_valid() {
            let mut quoted = String::new();
            crate::repr::write_str(&zone.key, &mut quoted);
            return Err(format!("the ZoneInfo key {quoted} is not an IANA zone name"));
        }
        if zone.cached {
            if let Some(&i) = self.zones.get(&zone.key) {
                self.boundary();
                self.get(i);
                return Ok(());
            }
        }
        self.boundary();
        self.save_global_named(GETATTR.0, GETATTR.1, GETATTR.2);
        self.save_tuple(2, |e| {
            e.save_global_named(ZONEINFO.0, ZONEINFO.1, ZONEINFO.2);
            // A C method's `__name__` is made anew by each `__reduce__`.
            e.save_str("_unpickle");
            Ok(())
        })?;
        self.op(super::REDUCE);
        self.memoize();
        self.save_tuple(2, |e| {
            e.save_value_str(&zone.key);
            e.save_int(i64::from(zone.cached));
            Ok(())
        })?;
        self.op(super::REDUCE);
        let i = self.memoize();
        if zone.cached {
            self.zones.insert(zone.key.clone(), i);
        }
        Ok(())
    }

    /// `deque.__reduce__`: the class called with `()` or `((), maxlen)`, its items from an
    /// iterator (`batch_list`: one item alone is an `APPEND`, and no empty batch follows
    /// a full one).
    pub(super) fn save_deque(&mut self, d: &Deque, depth: usize) -> Saved {
        if let Some(max) = d.maxlen {
            if d.items.len() as u64 > max {
                return Err(format!("a deque of {} items over its maxlen {max}", d.items.len()));
            }
            if i64::try_from(max).is_err() {
                return Err(format!("a deque maxlen {max} beyond what Python takes"));
            }
        }
        match d.maxlen {
            None => self.save_reduce(DEQUE, 0, |_| Ok(()))?,
            Some(max) => self.save_reduce(DEQUE, 2, |e| {
                e.save_tuple(0, |_| Ok(()))?;
                e.save_int(max as i64);
                Ok(())
            })?,
        }
        for batch in d.items.chunks(BATCH) {
            if let [one] = batch {
                self.object(one, depth + 1)?;
                self.op(super::APPEND);
                continue;
            }
            self.op(MARK);
            for v in batch {
                self.object(v, depth + 1)?;
            }
            self.op(super::APPENDS);
        }
        Ok(())
    }

    /// `defaultdict.__reduce__`: the class called with `()` or `(factory,)`, its items
    /// from an iterator as an `OrderedDict`'s.
    pub(super) fn save_defaultdict(&mut self, d: &DefaultDict, depth: usize) -> Saved {
        check_keys(d.entries.iter().map(|(k, _)| k), "a defaultdict key")?;
        match &d.factory {
            Object::None => self.save_reduce(DEFAULTDICT, 0, |_| Ok(()))?,
            Object::Type(m, n) if m == "builtins" && crate::object::stdlib::FACTORIES.contains(&n.as_str()) => {
                self.save_reduce(DEFAULTDICT, 1, |e| e.save_type(m, n))?
            }
            other => {
                return Err(format!(
                    "a defaultdict whose factory is {} (only None or a builtin class such as list or int)",
                    other.repr()
                ))
            }
        }
        self.save_items(&d.entries, depth)
    }

    /// A mapping's items after its `REDUCE`, as `batch_dict` writes an iterator's.
    fn save_items(&mut self, entries: &[(Object, Object)], depth: usize) -> Saved {
        for batch in entries.chunks(BATCH) {
            if let [(k, v)] = batch {
                self.object(k, depth + 1)?;
                self.object(v, depth + 1)?;
                self.op(SETITEM);
                continue;
            }
            self.op(MARK);
            for (k, v) in batch {
                self.object(k, depth + 1)?;
                self.object(v, depth + 1)?;
            }
            self.op(SETITEMS);
        }
        Ok(())
    }

    /// A `timezone`; `timezone.utc` (no name, offset zero) is one object, memoised once.
    pub(super) fn save_timezone(&mut self, tz: &TimeZone) -> Saved {
        if !tz.is_valid() {
            return Err(format!("{tz} has an offset Python refuses (not strictly within one day)"));
        }
        let utc = tz.name.is_none() && tz.offset == TimeDelta::default();
        if let (true, Some(i)) = (utc, self.utc) {
            self.boundary();
            self.get(i);
            return Ok(());
        }
        self.save_reduce(TIMEZONE, if tz.name.is_some() { 2 } else { 1 }, |e| {
            e.save_timedelta(&tz.offset)?;
            if let Some(name) = &tz.name {
                e.save_value_str(name);
            }
            Ok(())
        })?;
        if utc {
            self.utc = Some(self.memo - 1);
        }
        Ok(())
    }

    pub(super) fn save_decimal(&mut self, text: &str) -> Saved {
        if !is_decimal(text) {
            let mut quoted = String::new();
            crate::repr::write_str(text, &mut quoted);
            return Err(format!("Decimal({quoted}) is not a number Python's decimal reads"));
        }
        self.save_reduce(DECIMAL, 1, |e| {
            e.save_str(text);
            Ok(())
        })
    }

    pub(super) fn save_fraction(&mut self, parts: &(Object, Object), depth: usize) -> Saved {
        let (n, d) = parts;
        int_part(n, "a Fraction's numerator")?;
        if int_part(d, "a Fraction's denominator")? == Some(0) {
            return Err("a Fraction whose denominator is zero".to_string());
        }
        self.save_reduce(FRACTION, 2, |e| {
            e.object(n, depth + 1)?;
            e.object(d, depth + 1)
        })
    }

    /// `object.__reduce_ex__(4)` of a `UUID` (slots, `__getstate__`): `NEWOBJ`, then its
    /// state `{'int': value}` (`is_safe` is unknown, so left out).
    pub(super) fn save_uuid(&mut self, value: u128) {
        self.boundary();
        self.save_global_named(UUID.0, UUID.1, UUID.2);
        self.boundary();
        self.op(EMPTY_TUPLE);
        self.op(NEWOBJ);
        self.memoize();
        self.boundary();
        self.op(EMPTY_DICT);
        self.memoize();
        self.save_name("int");
        self.save_u128(value);
        self.op(SETITEM);
        self.op(BUILD);
    }

    /// A `pathlib` path: its class called with its parts, as `PurePath.__reduce__` gives
    /// them. Parts are interned (`sys.intern`), but for the anchor (`'c:\\'`, `'//'`),
    /// which is made anew unless it is one character.
    pub(super) fn save_path(&mut self, flavor: PathFlavor, parts: &[String]) -> Saved {
        let class: Global = match flavor {
            PathFlavor::PurePosix => ("pathlib", "PurePosixPath", Names::Python),
            PathFlavor::PureWindows => ("pathlib", "PureWindowsPath", Names::Python),
            PathFlavor::Posix => ("pathlib", "PosixPath", Names::Python),
            PathFlavor::Windows => ("pathlib", "WindowsPath", Names::Python),
        };
        let windows = matches!(flavor, PathFlavor::PureWindows | PathFlavor::Windows);
        for (i, part) in parts.iter().enumerate() {
            let anchor = i == 0 && is_anchor(part, windows);
            // A POSIX anchor is '/' or '//' (three or more slashes are one).
            let bad = (anchor && !windows && part != "/" && part != "//")
                || part.is_empty()
                || part == "."
                || (!anchor && (part.contains('/') || (windows && part.contains('\\'))))
                || part.contains('\0');
            if bad {
                let mut quoted = String::new();
                crate::repr::write_str(part, &mut quoted);
                return Err(format!("{quoted} is not a part of a {} (parts as path.parts gives them)", class.1));
            }
        }
        self.save_reduce(class, parts.len(), |e| {
            for (i, part) in parts.iter().enumerate() {
                if i == 0 && is_anchor(part, windows) && part.chars().count() > 1 {
                    e.save_str(part);
                } else {
                    e.save_name(part);
                }
            }
            Ok(())
        })
    }

    pub(super) fn save_range(&mut self, parts: &[Object; 3], depth: usize) -> Saved {
        for (p, what) in parts.iter().zip(["start", "stop", "step"]) {
            int_part(p, &format!("a range's {what}"))?;
        }
        if int_part(&parts[2], "")? == Some(0) {
            return Err("a range whose step is zero".to_string());
        }
        self.save_reduce(RANGE, 3, |e| parts.iter().try_for_each(|p| e.object(p, depth + 1)))
    }

    pub(super) fn save_slice(&mut self, parts: &[Object; 3], depth: usize) -> Saved {
        self.save_reduce(SLICE, 3, |e| parts.iter().try_for_each(|p| e.object(p, depth + 1)))
    }

    /// A class as a value: its global, the same memo entry its instances' reduces use.
    pub(super) fn save_type(&mut self, module: &str, name: &str) -> Saved {
        let Some(&(m, n, names)) = CLASSES.iter().find(|(m, n, _)| *m == module && *n == name) else {
            return Err(format!(
                "the class {module}.{name} (a class is written only if object arrays hold its \
                 instances: the standard library's types above)"
            ));
        };
        self.save_global_named(m, n, names);
        Ok(())
    }

    /// A Python `int` of any `u128`: `save_long`'s opcodes, the fewest bytes for `LONG1`.
    fn save_u128(&mut self, v: u128) {
        match i64::try_from(v) {
            Ok(small) => self.save_int(small),
            Err(_) => {
                self.boundary();
                let mut bytes = v.to_le_bytes().to_vec();
                while bytes.len() > 1 && bytes[bytes.len() - 1] == 0 && bytes[bytes.len() - 2] & 0x80 == 0 {
                    bytes.pop();
                }
                if bytes[bytes.len() - 1] & 0x80 != 0 {
                    bytes.push(0); // positive: a sign byte
                }
                self.long(&bytes);
            }
        }
    }
}

/// A time's fields and `tzinfo` as Python accepts them; `repr` names the value.
fn check_time(t: &Time, repr: impl Fn() -> String) -> Saved {
    if !t.is_valid() {
        return Err(format!("{} is not a valid time", repr()));
    }
    match &t.tzinfo {
        Some(TzInfo::TimeZone(tz)) if !tz.is_valid() => Err(format!("{} has an offset Python refuses", repr())),
        Some(TzInfo::ZoneInfo(zone)) if !zone.is_valid() => {
            Err(format!("{} has a ZoneInfo key that is not an IANA zone name", repr()))
        }
        _ => Ok(()),
    }
}

/// The value of an `int` part (`None` beyond `i64`); an error naming `what` for any other
/// value.
fn int_part(v: &Object, what: &str) -> std::result::Result<Option<i64>, String> {
    match v {
        Object::Int(i) => Ok(Some(*i)),
        Object::BigInt(t) => match bigint::parse_decimal(t)? {
            Int::Small(i) => Ok(Some(i)),
            Int::Big(_) => Ok(None),
        },
        other => Err(format!("{what} is a {} {}, not an int", other.python_type(), other.snippet())),
    }
}

/// Whether a path's first part is its anchor (drive and root): `'/'`, `'//'`; `'c:\\'`,
/// `'c:'`, `'\\'`, `'\\\\server\\share\\'`.
fn is_anchor(part: &str, windows: bool) -> bool {
    if windows {
        part.starts_with('\\') || part.as_bytes().get(1) == Some(&b':')
    } else {
        part.starts_with('/')
    }
}

/// Whether `Decimal(text)` reads the text (ASCII digits only): surrounding whitespace and
/// underscores are ignored as Python ignores them, then `[sign] (digits [. [digits]] |
/// . digits) [e [sign] digits] | [sign] (inf | infinity) | [sign] [s]nan [digits]`, any case.
pub(super) fn is_decimal(text: &str) -> bool {
    let cleaned: String = text.trim_matches(char::is_whitespace).chars().filter(|&c| c != '_').collect();
    let lower = cleaned.to_ascii_lowercase();
    let body = lower.strip_prefix(['+', '-']).unwrap_or(&lower);
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if body == "inf" || body == "infinity" {
        return true;
    }
    if let Some(payload) = body.strip_prefix("snan").or_else(|| body.strip_prefix("nan")) {
        return payload.is_empty() || all_digits(payload);
    }
    let (mantissa, exponent) = match body.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (body, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (int.is_empty() || all_digits(int))
                && (frac.is_empty() || all_digits(frac))
                && !(int.is_empty() && frac.is_empty())
        }
        None => all_digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| all_digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

/// Whether a `Decimal`'s text is a signalling NaN (which Python refuses to hash).
pub(super) fn is_signalling_nan(text: &str) -> bool {
    let cleaned = text.trim_matches(char::is_whitespace).to_ascii_lowercase();
    let body = cleaned.strip_prefix(['+', '-']).unwrap_or(&cleaned);
    body.starts_with("snan") && is_decimal(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_text_is_what_python_reads() {
        // Each checked with Python 3.11's decimal.Decimal(text).
        for good in [
            "1.50",
            "NaN",
            "-nan12",
            "sNaN",
            "inf",
            "+Infinity",
            "-0",
            ".5",
            "5.",
            "1E+999999",
            "_1_",
            " 1 ",
            "1__0",
            "nan_1",
            "Infinity_",
        ] {
            assert!(is_decimal(good), "{good}");
        }
        for bad in ["", "1e", ".", "1.2.3", "e5", "abc", "nan1.5", "++1", "1e+-2", "0x10", "١"] {
            assert!(!is_decimal(bad), "{bad}");
        }
        assert!(is_signalling_nan("-sNaN1"));
        assert!(!is_signalling_nan("NaN"));
    }
}
