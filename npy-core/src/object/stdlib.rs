//! The Python standard library's data types that object arrays hold, as typed values:
//! `datetime`'s `date`, `time`, `datetime`, `timedelta` and `timezone`, `zoneinfo`'s
//! `ZoneInfo` (by its key), `collections`' `deque` and `defaultdict`, and `pathlib`'s path
//! flavours. Each keeps exactly what its pickle carries, so it is written back as
//! CPython pickles it, and its [`Display`](fmt::Display) is Python's `repr()`.

use std::fmt;

/// A `datetime.date`.
///
/// # Examples
/// ```
/// use npy_core::object::Date;
///
/// assert_eq!(Date { year: 2020, month: 1, day: 2 }.to_string(), "datetime.date(2020, 1, 2)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Date {
    /// 1 to 9999.
    pub year: u16,
    /// 1 to 12.
    pub month: u8,
    /// 1 to the month's last day.
    pub day: u8,
}

impl Date {
    /// Whether Python accepts the date (`datetime.date(year, month, day)` raises otherwise).
    pub fn is_valid(&self) -> bool {
        (1..=9999).contains(&self.year)
            && (1..=12).contains(&self.month)
            && self.day >= 1
            && self.day <= self.month_days()
    }

    fn month_days(&self) -> u8 {
        let leap = self.year.is_multiple_of(4) && (!self.year.is_multiple_of(100) || self.year.is_multiple_of(400));
        match self.month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "datetime.date({}, {}, {})", self.year, self.month, self.day)
    }
}

/// A `datetime.time`, with its `tzinfo` if it has one (a fixed-offset [`TimeZone`] or a
/// [`ZoneInfo`]).
///
/// # Examples
/// ```
/// use npy_core::object::{Time, TimeZone};
///
/// let t = Time { hour: 1, minute: 2, second: 0, microsecond: 0, fold: false, tzinfo: None };
/// assert_eq!(t.to_string(), "datetime.time(1, 2)");
/// let utc = Time { tzinfo: Some(TimeZone::utc().into()), ..t };
/// assert_eq!(utc.to_string(), "datetime.time(1, 2, tzinfo=datetime.timezone.utc)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Time {
    /// 0 to 23.
    pub hour: u8,
    /// 0 to 59.
    pub minute: u8,
    /// 0 to 59.
    pub second: u8,
    /// 0 to 999,999.
    pub microsecond: u32,
    /// Python's `fold` (PEP 495): the later of two equal wall times.
    pub fold: bool,
    /// The `tzinfo`: `None`, a `datetime.timezone` or a `zoneinfo.ZoneInfo`.
    pub tzinfo: Option<TzInfo>,
}

impl Time {
    /// Whether Python accepts the time's fields.
    pub fn is_valid(&self) -> bool {
        self.hour < 24 && self.minute < 60 && self.second < 60 && self.microsecond < 1_000_000
    }

    /// `h, m[, s[, us]]` as Python's reprs write them (seconds and microseconds only when
    /// not zero), then `tzinfo=` and `fold=` (a `datetime` writes `fold=` first).
    fn write_fields(&self, f: &mut fmt::Formatter<'_>, fold_first: bool) -> fmt::Result {
        write!(f, "{}, {}", self.hour, self.minute)?;
        if self.second != 0 || self.microsecond != 0 {
            write!(f, ", {}", self.second)?;
        }
        if self.microsecond != 0 {
            write!(f, ", {}", self.microsecond)?;
        }
        if self.fold && fold_first {
            f.write_str(", fold=1")?;
        }
        if let Some(tz) = &self.tzinfo {
            write!(f, ", tzinfo={tz}")?;
        }
        if self.fold && !fold_first {
            f.write_str(", fold=1")?;
        }
        Ok(())
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("datetime.time(")?;
        self.write_fields(f, false)?;
        f.write_str(")")
    }
}

/// A `datetime.datetime`: a [`Date`] and a [`Time`] (whose `tzinfo` is the datetime's).
///
/// # Examples
/// ```
/// use npy_core::object::{Date, DateTime, Time};
///
/// let dt = DateTime {
///     date: Date { year: 2020, month: 1, day: 2 },
///     time: Time { hour: 3, minute: 4, second: 5, microsecond: 6, fold: false, tzinfo: None },
/// };
/// assert_eq!(dt.to_string(), "datetime.datetime(2020, 1, 2, 3, 4, 5, 6)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// The date.
    pub date: Date,
    /// The time of day, and the `tzinfo`.
    pub time: Time,
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.date;
        write!(f, "datetime.datetime({}, {}, {}, ", d.year, d.month, d.day)?;
        self.time.write_fields(f, true)?;
        f.write_str(")")
    }
}

/// A `datetime.timedelta`, normalised as Python keeps it: `0 <= seconds < 86400`,
/// `0 <= microseconds < 1_000_000`, `|days| <= 999_999_999`.
///
/// # Examples
/// ```
/// use npy_core::object::TimeDelta;
///
/// assert_eq!(TimeDelta { days: -1, seconds: 68400, microseconds: 0 }.to_string(),
///            "datetime.timedelta(days=-1, seconds=68400)");
/// assert_eq!(TimeDelta::default().to_string(), "datetime.timedelta(0)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct TimeDelta {
    /// Days, `-999_999_999..=999_999_999`.
    pub days: i32,
    /// Seconds, `0..86400`.
    pub seconds: i32,
    /// Microseconds, `0..1_000_000`.
    pub microseconds: i32,
}

impl TimeDelta {
    /// Whether the fields are normalised as Python keeps them (what `BUILD`-free
    /// `timedelta(days, seconds, microseconds)` of these values gives back unchanged).
    pub fn is_valid(&self) -> bool {
        self.days.unsigned_abs() <= 999_999_999
            && (0..86_400).contains(&self.seconds)
            && (0..1_000_000).contains(&self.microseconds)
    }

    /// The whole duration in microseconds (an `i128`: Python's longest timedelta, 999,999,999
    /// days, is more microseconds than an `i64` holds).
    ///
    /// # Examples
    /// ```
    /// use npy_core::object::TimeDelta;
    /// let max = TimeDelta { days: 999_999_999, seconds: 86_399, microseconds: 999_999 };
    /// assert_eq!(max.total_microseconds(), 86_399_999_999_999_999_999);
    /// let most = TimeDelta { days: i32::MIN, seconds: 0, microseconds: 0 };
    /// assert_eq!(most.total_microseconds(), i128::from(i32::MIN) * 86_400_000_000);
    /// ```
    pub fn total_microseconds(&self) -> i128 {
        (i128::from(self.days) * 86_400 + i128::from(self.seconds)) * 1_000_000 + i128::from(self.microseconds)
    }
}

impl fmt::Display for TimeDelta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("datetime.timedelta(")?;
        let mut sep = "";
        for (name, v) in [("days", self.days), ("seconds", self.seconds), ("microseconds", self.microseconds)] {
            if v != 0 {
                write!(f, "{sep}{name}={v}")?;
                sep = ", ";
            }
        }
        if sep.is_empty() {
            f.write_str("0")?;
        }
        f.write_str(")")
    }
}

/// A `datetime.timezone`: a fixed offset from UTC (strictly within one day, as Python
/// requires) and an optional name.
///
/// # Examples
/// ```
/// use npy_core::object::{TimeDelta, TimeZone};
///
/// assert_eq!(TimeZone::utc().to_string(), "datetime.timezone.utc");
/// let est = TimeZone { offset: TimeDelta { days: -1, seconds: 68400, microseconds: 0 }, name: Some("EST".into()) };
/// assert_eq!(est.to_string(), "datetime.timezone(datetime.timedelta(days=-1, seconds=68400), 'EST')");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TimeZone {
    /// The offset from UTC.
    pub offset: TimeDelta,
    /// The name given to `timezone(offset, name)`, if any.
    pub name: Option<String>,
}

impl TimeZone {
    /// `datetime.timezone.utc`.
    pub fn utc() -> TimeZone {
        TimeZone { offset: TimeDelta::default(), name: None }
    }

    /// Whether Python accepts the offset: strictly between -24 and 24 hours.
    pub fn is_valid(&self) -> bool {
        self.offset.is_valid() && self.offset.total_microseconds().abs() < 86_400_000_000
    }
}

impl fmt::Display for TimeZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            None if self.offset == TimeDelta::default() => f.write_str("datetime.timezone.utc"),
            None => write!(f, "datetime.timezone({})", self.offset),
            Some(name) => {
                let mut quoted = String::new();
                crate::repr::write_str(name, &mut quoted);
                write!(f, "datetime.timezone({}, {quoted})", self.offset)
            }
        }
    }
}

/// A `datetime` value's `tzinfo`: a fixed offset or a zone of the IANA database.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TzInfo {
    /// A `datetime.timezone`.
    TimeZone(TimeZone),
    /// A `zoneinfo.ZoneInfo`.
    ZoneInfo(ZoneInfo),
}

impl From<TimeZone> for TzInfo {
    fn from(tz: TimeZone) -> Self {
        TzInfo::TimeZone(tz)
    }
}

impl From<ZoneInfo> for TzInfo {
    fn from(zone: ZoneInfo) -> Self {
        TzInfo::ZoneInfo(zone)
    }
}

impl fmt::Display for TzInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TzInfo::TimeZone(tz) => tz.fmt(f),
            TzInfo::ZoneInfo(zone) => zone.fmt(f),
        }
    }
}

/// A `zoneinfo.ZoneInfo`: its key in the IANA time zone database, and whether it came
/// from `ZoneInfo(key)` (the cached instance, `cached`) or `ZoneInfo.no_cache(key)`. The
/// zone's rules are not read: Python reads them from its own database when it loads the
/// value, and a key that names no zone there fails then (`ZoneInfoNotFoundError`).
///
/// # Examples
/// ```
/// use npy_core::object::ZoneInfo;
///
/// let paris = ZoneInfo { key: "Europe/Paris".into(), cached: true };
/// assert!(paris.is_valid());
/// assert_eq!(paris.to_string(), "zoneinfo.ZoneInfo(key='Europe/Paris')");
/// assert!(!ZoneInfo { key: "../../etc/passwd".into(), cached: true }.is_valid());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ZoneInfo {
    /// The key: `Europe/Paris`, `UTC`, `Etc/GMT+5`.
    pub key: String,
    /// `ZoneInfo(key)` (true) or `ZoneInfo.no_cache(key)` (false).
    pub cached: bool,
}

impl ZoneInfo {
    /// Whether the key has the form of an IANA zone name, so that no path it makes can
    /// leave the zone database: at most 5 parts of at most 32 characters joined by `/`,
    /// each beginning with an ASCII letter and holding only ASCII letters, digits, `_`,
    /// `-` and `+` (so no `.` or `..`, no absolute path, no `\\`, no NUL).
    pub fn is_valid(&self) -> bool {
        is_zone_key(&self.key)
    }
}

/// See [`ZoneInfo::is_valid`].
pub(crate) fn is_zone_key(key: &str) -> bool {
    let parts = key.split('/');
    key.len() <= 128
        && key.split('/').count() <= 5
        && parts.into_iter().all(|p| {
            p.len() <= 32
                && p.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
                && p.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+'))
        })
}

impl fmt::Display for ZoneInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut quoted = String::new();
        crate::repr::write_str(&self.key, &mut quoted);
        write!(f, "zoneinfo.ZoneInfo(key={quoted})")
    }
}

/// A `collections.deque`: its items, left to right, and its `maxlen` if it has one.
///
/// # Examples
/// ```
/// use npy_core::object::{Deque, Object};
///
/// let d = Deque { items: vec![Object::Int(1), "a".into()], maxlen: Some(3) };
/// assert_eq!(Object::Deque(Box::new(d)).repr(), "deque([1, 'a'], maxlen=3)");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Deque {
    /// The items, left to right (at most `maxlen` of them).
    pub items: Vec<super::Object>,
    /// The `maxlen`, if the deque has one.
    pub maxlen: Option<u64>,
}

/// A `collections.defaultdict`: its `default_factory` and its entries in insertion order.
///
/// The factory is [`Object::None`](super::Object::None) or a builtin class
/// ([`Object::Type`](super::Object::Type) of `builtins`: `list`, `int`, `set`, `dict`,
/// ...): a factory that is any other callable would run code when a missing key is read,
/// and is refused.
///
/// # Examples
/// ```
/// use npy_core::object::{DefaultDict, Object};
///
/// let d = DefaultDict {
///     factory: Object::Type("builtins".into(), "list".into()),
///     entries: vec![(Object::Int(1), Object::List(vec![Object::Int(2)]))],
/// };
/// assert_eq!(Object::DefaultDict(Box::new(d)).repr(), "defaultdict(<class 'list'>, {1: [2]})");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DefaultDict {
    /// `None`, or the builtin class called for a missing key.
    pub factory: super::Object,
    /// The entries, in insertion order.
    pub entries: Vec<(super::Object, super::Object)>,
}

/// The builtin classes a `defaultdict`'s factory may be (each makes a plain value when
/// called with no argument, and runs no code of anyone's).
pub(crate) const FACTORIES: [&str; 12] =
    ["list", "dict", "set", "frozenset", "tuple", "int", "float", "complex", "str", "bytes", "bytearray", "bool"];

/// Which `pathlib` class a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathFlavor {
    /// `pathlib.PurePosixPath`.
    PurePosix,
    /// `pathlib.PureWindowsPath`.
    PureWindows,
    /// `pathlib.PosixPath` (what `pathlib.Path` is on Linux and macOS).
    Posix,
    /// `pathlib.WindowsPath` (what `pathlib.Path` is on Windows; Python on other systems
    /// cannot make one).
    Windows,
}

impl PathFlavor {
    /// The class's name in `pathlib`.
    pub fn class_name(self) -> &'static str {
        match self {
            PathFlavor::PurePosix => "PurePosixPath",
            PathFlavor::PureWindows => "PureWindowsPath",
            PathFlavor::Posix => "PosixPath",
            PathFlavor::Windows => "WindowsPath",
        }
    }

    /// The flavour of a `pathlib` class name.
    pub fn from_class_name(name: &str) -> Option<PathFlavor> {
        Some(match name {
            "PurePosixPath" => PathFlavor::PurePosix,
            "PureWindowsPath" => PathFlavor::PureWindows,
            "PosixPath" => PathFlavor::Posix,
            "WindowsPath" => PathFlavor::Windows,
            _ => return None,
        })
    }

    fn windows(self) -> bool {
        matches!(self, PathFlavor::PureWindows | PathFlavor::Windows)
    }

    /// The path's text as `str(path)` gives it, from the parts its pickle holds
    /// (`('/', 'a', 'b')` → `/a/b`; `('c:\\', 'x')` → `c:\x`).
    pub fn join(self, parts: &[String]) -> String {
        let sep = if self.windows() { '\\' } else { '/' };
        let mut out = String::new();
        for (i, part) in parts.iter().enumerate() {
            if i > 0 && !out.ends_with(['/', '\\']) {
                out.push(sep);
            }
            out.push_str(part);
        }
        if out.is_empty() {
            out.push('.');
        }
        out
    }
}
