//! Python repr, written as CPython writes it.
//!
//! The one writer of [`Literal`](crate::literal::Literal)'s and
//! [`Object`](crate::object::Object)'s `repr` (and `Display`): floats in the shortest
//! round-trip digits laid out as `float_repr_style = 'short'` does (`1.0`, `1e-05`,
//! `1e+16`), complex numbers as `complex.__repr__` (`1j`, `(1+2j)`, `(-0-0j)`), str and
//! bytes with CPython's quote choice and escapes, and lists, tuples and dicts of any value
//! that writes its own repr, with Python's `, ` and `: ` separators. Each writer appends to
//! `out`. Pure functions, no I/O.

mod printable;

/// `repr(x)` of a float: the shortest round-trip digits in Python's layout.
pub(crate) fn write_float(x: f64, out: &mut String) {
    if x.is_nan() {
        out.push_str("nan");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x < 0.0 { "-inf" } else { "inf" });
        return;
    }
    // `{:e}` gives the shortest round-trip digits: "-1.2345e-5", "0e0", "1e16". When two
    // candidates of that length round-trip, Python takes the one nearest to `x` (ties to
    // even), which is the correctly rounded value that `{:.Ne}` gives.
    let shortest = format!("{x:e}");
    let n_digits = shortest.split('e').next().map_or(0, |m| m.bytes().filter(u8::is_ascii_digit).count());
    let sci = match n_digits.checked_sub(1) {
        Some(prec) if prec > 0 => {
            let nearest = format!("{x:.prec$e}");
            if nearest.parse::<f64>() == Ok(x) {
                nearest
            } else {
                shortest
            }
        }
        _ => shortest,
    };
    let (mantissa, exp_text) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i64 = exp_text.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let mut digits: Vec<char> = mantissa.chars().filter(char::is_ascii_digit).collect();
    while digits.len() > 1 && digits.last() == Some(&'0') {
        digits.pop();
    }
    if negative {
        out.push('-');
    }
    if !(-4..16).contains(&exp) {
        let mut it = digits.iter();
        if let Some(first) = it.next() {
            out.push(*first);
        }
        if digits.len() > 1 {
            out.push('.');
            out.extend(it);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    } else if exp >= 0 {
        // `exp` is in 0..16 here.
        let int_len = usize::try_from(exp).unwrap_or(0) + 1;
        for i in 0..int_len {
            out.push(digits.get(i).copied().unwrap_or('0'));
        }
        out.push('.');
        if digits.len() > int_len {
            out.extend(digits.iter().skip(int_len));
        } else {
            out.push('0');
        }
    } else {
        out.push_str("0.");
        for _ in 1..exp.unsigned_abs() {
            out.push('0');
        }
        out.extend(digits.iter());
    }
}

/// `repr(z)` of a complex: `1j`, `(1+2j)`, `(-0-0j)`, `(1+nanj)`.
pub(crate) fn write_complex(re: f64, im: f64, out: &mut String) {
    // Components print as `repr` does, without a forced `.0`.
    let part = |x: f64| {
        let mut s = String::new();
        write_float(x, &mut s);
        match s.strip_suffix(".0") {
            Some(t) => t.to_string(),
            None => s,
        }
    };
    if re == 0.0 && re.is_sign_positive() {
        out.push_str(&part(im));
        out.push('j');
        return;
    }
    let imag = part(im);
    out.push('(');
    out.push_str(&part(re));
    if !imag.starts_with('-') {
        out.push('+');
    }
    out.push_str(&imag);
    out.push_str("j)");
}

/// `repr(s)` of a str: `'` quotes, or `"` when the text holds a `'` and no `"`; the quote
/// and backslashes escaped, and the characters CPython's `unicode_repr` escapes.
pub(crate) fn write_str(s: &str, out: &mut String) {
    write_quoted(s, true, out);
}

/// A str quoted as [`write_str`] quotes it, but with its backslashes as they are: for
/// messages that quote source text, whose escapes then read as written.
pub(crate) fn write_str_keeping_backslashes(s: &str, out: &mut String) {
    write_quoted(s, false, out);
}

fn write_quoted(s: &str, escape_backslashes: bool, out: &mut String) {
    // Printable ASCII without quote nor backslash (most names) is written as it is. Every
    // byte tested, none skipped, so that the test runs many bytes at a time.
    let plain = |b: u8| (0x20..0x7f).contains(&b) && b != b'\'' && b != b'\\';
    if s.bytes().fold(true, |all, b| all & plain(b)) {
        out.push('\'');
        out.push_str(s);
        out.push('\'');
        return;
    }
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    out.push(quote);
    for c in s.chars() {
        if c == quote || (escape_backslashes && c == '\\') {
            out.push('\\');
            out.push(c);
        } else {
            push_char(out, c);
        }
    }
    out.push(quote);
}

/// Pushes one character as CPython's `unicode_repr` does, except for quote and backslash.
fn push_char(out: &mut String, c: char) {
    let code = u32::from(c);
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        _ if code < 0x20 || code == 0x7f => push_hex(out, "\\x", code, 2),
        _ if code < 0x7f || printable::is_printable(c) => out.push(c),
        _ if code <= 0xff => push_hex(out, "\\x", code, 2),
        _ if code <= 0xffff => push_hex(out, "\\u", code, 4),
        _ => push_hex(out, "\\U", code, 8),
    }
}

fn push_hex(out: &mut String, prefix: &str, value: u32, width: usize) {
    out.push_str(prefix);
    out.push_str(&format!("{value:0width$x}"));
}

/// `repr(b)` of a bytes: the same quote choice as a str; printable ASCII as it is, `\t`,
/// `\n`, `\r`, and `\xhh` for any other byte.
pub(crate) fn write_bytes(b: &[u8], out: &mut String) {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') { b'"' } else { b'\'' };
    out.push('b');
    out.push(char::from(quote));
    for &c in b {
        match c {
            _ if c == quote || c == b'\\' => {
                out.push('\\');
                out.push(char::from(c));
            }
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            _ if !(0x20..0x7f).contains(&c) => push_hex(out, "\\x", u32::from(c), 2),
            _ => out.push(char::from(c)),
        }
    }
    out.push(char::from(quote));
}

/// `repr` of a list, each item written by `repr`.
pub(crate) fn write_list<T>(items: &[T], repr: fn(&T, &mut String), out: &mut String) {
    out.push('[');
    write_items(items, repr, out);
    out.push(']');
}

/// `repr` of a tuple: a 1-tuple keeps its comma, `(x,)`.
pub(crate) fn write_tuple<T>(items: &[T], repr: fn(&T, &mut String), out: &mut String) {
    out.push('(');
    write_items(items, repr, out);
    if items.len() == 1 {
        out.push(',');
    }
    out.push(')');
}

/// `repr` of a non-empty set, in the items' order (`{1, 2}`).
pub(crate) fn write_set<T>(items: &[T], repr: fn(&T, &mut String), out: &mut String) {
    out.push('{');
    write_items(items, repr, out);
    out.push('}');
}

/// `repr` of a dict, in the entries' order.
pub(crate) fn write_dict<T>(entries: &[(T, T)], repr: fn(&T, &mut String), out: &mut String) {
    out.push('{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        repr(k, out);
        out.push_str(": ");
        repr(v, out);
    }
    out.push('}');
}

fn write_items<T>(items: &[T], repr: fn(&T, &mut String), out: &mut String) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        repr(item, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_keep_backslashes_that_reprs_escape() {
        let (mut repr, mut message) = (String::new(), String::new());
        write_str("a\\u0041'\n", &mut repr);
        write_str_keeping_backslashes("a\\u0041'\n", &mut message);
        assert_eq!(repr, r#""a\\u0041'\n""#);
        assert_eq!(message, r#""a\u0041'\n""#);
    }
}
