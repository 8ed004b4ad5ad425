//! Text arguments of opcodes as Python reads them (`FLOAT`, `UNICODE`), and quoting and
//! type names for messages.

use super::stdlib::Mapping;
use super::{Kind, Machine, PickleInput, Value};

impl<R: PickleInput> Machine<R> {
    /// Python's name of a value's type, for messages.
    pub(super) fn type_name(&self, v: Value) -> &'static str {
        match v {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::StrAt { .. } => "str",
            Value::BytesAt { .. } | Value::BytesOut { .. } => "bytes",
            Value::Node(_) => match self.kind(v) {
                Some(Kind::Str(_)) => "str",
                Some(Kind::Bytes(_)) => "bytes",
                Some(Kind::BigInt(_)) => "int",
                Some(Kind::Complex(..)) => "complex",
                Some(Kind::List(_) | Kind::ListOf { .. }) => "list",
                Some(Kind::Tuple { .. } | Kind::TupleAt { .. }) => "tuple",
                Some(Kind::Dict(_) | Kind::DictAt { .. } | Kind::DictOf { .. }) => "dict",
                Some(Kind::Global(_)) => "global",
                Some(Kind::Dtype(_)) => "numpy.dtype",
                Some(Kind::StringDtype { .. }) => "numpy.dtypes.StringDType",
                Some(Kind::Array(_)) | None => "numpy.ndarray",
                Some(Kind::Leaf(obj)) => obj.python_type(),
                Some(Kind::Set(set)) if set.frozen => "frozenset",
                Some(Kind::Set(_)) => "set",
                Some(Kind::Mapping { of: Mapping::Counter, .. }) => "collections.Counter",
                Some(Kind::Mapping { of: Mapping::DefaultDict(_), .. }) => "collections.defaultdict",
                Some(Kind::Mapping { .. }) => "collections.OrderedDict",
                Some(Kind::Deque(_)) => "collections.deque",
                Some(Kind::ZoneUnpickle) => "method",
                Some(Kind::Masked(_)) => "numpy.ma.MaskedArray",
                Some(Kind::Slice(_)) => "slice",
                Some(Kind::NewUuid) => "uuid.UUID",
                Some(Kind::SafeUuid) => "uuid.SafeUUID",
                Some(Kind::Safe(_)) => "instance of a safe global",
            },
        }
    }
}

/// Python's `float()` of a protocol 0 `FLOAT` argument.
pub(super) fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let ok = !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+'));
    if !ok {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Python's `raw-unicode-escape` codec: latin-1, except `\uXXXX` and `\UXXXXXXXX` after an
/// odd number of backslashes.
pub(super) fn raw_unicode_escape(bytes: &[u8]) -> std::result::Result<String, String> {
    // Room for the longest result (latin-1 above 0x7f takes 2 bytes, an escape fewer than
    // its text), so the buffer never grows.
    let mut out = String::with_capacity(bytes.iter().map(|&b| 1 + usize::from(b > 0x7f)).sum());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(char::from(bytes[i]));
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i] == b'\\' {
            i += 1;
        }
        let run = i - start;
        let escape = run % 2 == 1 && i < bytes.len() && matches!(bytes[i], b'u' | b'U');
        out.extend(std::iter::repeat_n('\\', if escape { run - 1 } else { run }));
        if !escape {
            continue;
        }
        let digits = if bytes[i] == b'u' { 4 } else { 8 };
        let hex = bytes.get(i + 1..i + 1 + digits).ok_or("a truncated \\u escape")?;
        let text = std::str::from_utf8(hex).map_err(|_| "a bad \\u escape")?;
        let code = u32::from_str_radix(text, 16).map_err(|_| "a bad \\u escape")?;
        out.push(char::from_u32(code).ok_or("a \\u escape that is not a Unicode scalar value")?);
        i += 1 + digits;
    }
    Ok(out)
}

/// Quotes text for a message, as Python's `repr` of a str, shortened.
pub(super) fn quote(s: &str) -> String {
    let shown: String = s.chars().take(80).collect();
    let mut r = String::new();
    crate::repr::write_str(&shown, &mut r);
    if s.chars().count() > 80 {
        r.push_str("...");
    }
    r
}
