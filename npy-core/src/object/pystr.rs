//! Python's `str()` of the values object arrays hold ([`Object::str`]), and the ISO
//! texts of the `datetime` types (their `isoformat()`).
//!
//! `str()` is `repr()` for every value but these: a `str` is its text; an ndarray,
//! object array or NumPy scalar is NumPy's `str()` (`[0 1 2]`, `2020-01-02`, `3 seconds`);
//! `date`, `time` and `datetime` are ISO text (`2020-01-02 03:04:05`, a space between
//! date and time); a `timedelta` is `1 day, 2:03:04.000005`; a `timezone` its name or
//! `UTC±HH:MM`; a `Decimal` its text; a `Fraction` `n/d` (or `n`); a `UUID` its hyphenated
//! hex; a path its text.

use std::fmt::Write as _;

use super::{ndrepr, Date, DateTime, Object, Time, TimeDelta, TimeZone, TzInfo};

impl Object {
    /// Python's `str()` of the value: `repr()` but for text, NumPy's arrays and scalars
    /// and the standard library's value types (see the module).
    ///
    /// # Examples
    /// ```
    /// use npy_core::object::{Date, Object};
    ///
    /// assert_eq!(Object::from("it's").str(), "it's");
    /// assert_eq!(Object::List(vec![Object::from("a")]).str(), "['a']");
    /// assert_eq!(Object::Date(Date { year: 2020, month: 1, day: 2 }).str(), "2020-01-02");
    /// assert_eq!(Object::Uuid(1).str(), "00000000-0000-0000-0000-000000000001");
    /// ```
    pub fn str(&self) -> String {
        let mut out = String::new();
        match self {
            Object::Str(s) => out.push_str(s),
            Object::Array(a) => ndrepr::write_array_str(a, &mut out),
            Object::ObjectArray(a) => ndrepr::write_object_array_str(a, &mut out),
            Object::Scalar(a) => ndrepr::write_scalar_str(a, &mut out),
            Object::Date(d) => out.push_str(&d.isoformat()),
            Object::Time(t) => out.push_str(&t.isoformat()),
            Object::DateTime(dt) => {
                out.push_str(&dt.date.isoformat());
                out.push(' ');
                out.push_str(&dt.time.isoformat());
            }
            Object::TimeDelta(td) => out.push_str(&td.python_str()),
            Object::TimeZone(tz) => out.push_str(&tz.tzname()),
            Object::ZoneInfo(zone) => out.push_str(&zone.key),
            Object::Decimal(text) => out.push_str(text),
            Object::Fraction(parts) => {
                parts.0.write_repr(&mut out);
                if parts.1 != Object::Int(1) {
                    out.push('/');
                    parts.1.write_repr(&mut out);
                }
            }
            Object::Uuid(v) => {
                let h = format!("{v:032x}");
                let _ = write!(out, "{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..]);
            }
            Object::Path(flavor, parts) => out.push_str(&flavor.join(parts)),
            other => other.write_repr(&mut out),
        }
        out
    }
}

impl Date {
    /// `date.isoformat()`: `2020-01-02`.
    pub fn isoformat(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl Time {
    /// `time.isoformat()`: `03:04:05`, `03:04:05.000006`, then the UTC offset of its
    /// `tzinfo` (`+05:30`) when it is a fixed `timezone` (not for a `ZoneInfo`: a
    /// `datetime`'s offset in a zone is not computed here, so its text lacks the offset
    /// Python's has).
    pub fn isoformat(&self) -> String {
        let mut out = format!("{:02}:{:02}:{:02}", self.hour, self.minute, self.second);
        if self.microsecond != 0 {
            let _ = write!(out, ".{:06}", self.microsecond);
        }
        // A zoneinfo zone has no offset without a date (Python's `utcoffset(None)` is
        // `None`), and this crate does not read the zone database for a datetime's.
        if let Some(TzInfo::TimeZone(tz)) = &self.tzinfo {
            out.push_str(&tz.offset_text());
        }
        out
    }
}

impl DateTime {
    /// `datetime.isoformat()`: `2020-01-02T03:04:05`, the offset after it when aware.
    pub fn isoformat(&self) -> String {
        format!("{}T{}", self.date.isoformat(), self.time.isoformat())
    }
}

impl TimeDelta {
    /// `str()` of a `timedelta`: `0:00:05`, `1 day, 2:03:04.000005`, `-1 day, 19:00:00`.
    pub fn python_str(&self) -> String {
        let mut out = String::new();
        if self.days != 0 {
            let plural = if self.days.unsigned_abs() == 1 { "" } else { "s" };
            let _ = write!(out, "{} day{plural}, ", self.days);
        }
        let (h, m, s) = (self.seconds / 3600, self.seconds / 60 % 60, self.seconds % 60);
        let _ = write!(out, "{h}:{m:02}:{s:02}");
        if self.microseconds != 0 {
            let _ = write!(out, ".{:06}", self.microseconds);
        }
        out
    }
}

impl TimeZone {
    /// `str()` of a `timezone` (its `tzname`): the name it was given, else `UTC` for a
    /// zero offset, else `UTC-05:00`.
    pub fn tzname(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None if self.offset == TimeDelta::default() => "UTC".to_string(),
            None => format!("UTC{}", self.offset_text()),
        }
    }

    /// The offset as `isoformat()` ends in: `+00:00`, `-05:00`, `+05:30:15.000001`.
    fn offset_text(&self) -> String {
        let total = self.offset.total_microseconds();
        let sign = if total < 0 { '-' } else { '+' };
        let abs = total.unsigned_abs();
        let (seconds, micros) = (abs / 1_000_000, abs % 1_000_000);
        let mut out = format!("{sign}{:02}:{:02}", seconds / 3600, seconds / 60 % 60);
        if seconds % 60 != 0 || micros != 0 {
            let _ = write!(out, ":{:02}", seconds % 60);
        }
        if micros != 0 {
            let _ = write!(out, ".{micros:06}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::PathFlavor;

    #[test]
    fn str_matches_python() {
        // Each expected text is Python 3's str() of the expression in the comment.
        let est = TimeZone { offset: TimeDelta { days: -1, seconds: 68400, microseconds: 0 }, name: None };
        let time =
            Time { hour: 3, minute: 4, second: 5, microsecond: 6, fold: false, tzinfo: Some(est.clone().into()) };
        let date = Date { year: 2020, month: 1, day: 2 };
        let cases = [
            // datetime.date(2020, 1, 2)
            (Object::Date(date), "2020-01-02"),
            // datetime.time(3, 4, 5, 6, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))
            (Object::Time(Box::new(time.clone())), "03:04:05.000006-05:00"),
            // datetime.datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))
            (Object::DateTime(Box::new(DateTime { date, time })), "2020-01-02 03:04:05.000006-05:00"),
            // datetime.timedelta(days=-1, seconds=68400)
            (Object::TimeDelta(TimeDelta { days: -1, seconds: 68400, microseconds: 0 }), "-1 day, 19:00:00"),
            // datetime.timedelta(days=2, seconds=5, microseconds=7)
            (Object::TimeDelta(TimeDelta { days: 2, seconds: 5, microseconds: 7 }), "2 days, 0:00:05.000007"),
            // datetime.timezone(datetime.timedelta(hours=-5))
            (Object::TimeZone(Box::new(est)), "UTC-05:00"),
            // datetime.timezone.utc
            (Object::TimeZone(Box::new(TimeZone::utc())), "UTC"),
            // decimal.Decimal('1.50')
            (Object::Decimal("1.50".into()), "1.50"),
            // fractions.Fraction(3, 4), fractions.Fraction(3)
            (Object::Fraction(Box::new((3.into(), 4.into()))), "3/4"),
            (Object::Fraction(Box::new((3.into(), 1.into()))), "3"),
            // uuid.UUID(int=2**127)
            (Object::Uuid(1 << 127), "80000000-0000-0000-0000-000000000000"),
            // pathlib.PurePosixPath('/a/b')
            (Object::Path(PathFlavor::PurePosix, vec!["/".into(), "a".into(), "b".into()]), "/a/b"),
            // range(3)
            (Object::Range(Box::new([0.into(), 3.into(), 1.into()])), "range(0, 3)"),
            // {1}
            (Object::Set(vec![1.into()]), "{1}"),
            // [b'x', 'y']
            (Object::List(vec![b"x"[..].into(), "y".into()]), "[b'x', 'y']"),
        ];
        for (value, want) in cases {
            assert_eq!(value.str(), want, "{value:?}");
        }
    }
}
