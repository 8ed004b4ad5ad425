//! Python ints beyond `i64`: the two's-complement little-endian bytes of pickle's `LONG1` /
//! `LONG4` to and from decimal text, with schoolbook arithmetic on base-10⁹ and base-2³²
//! limbs (the sizes are bounded by [`MAX_INT_DIGITS`], so quadratic cost is small).

/// Most decimal digits of an int, as Python's default `sys.get_int_max_str_digits()`: an
/// int longer than this cannot be printed by Python either.
pub(crate) const MAX_INT_DIGITS: usize = 4300;

/// Most bytes of a `LONG1`/`LONG4` payload read: 256¹⁷⁸⁶ has 4301 decimal digits (the
/// decoder then checks the text against [`MAX_INT_DIGITS`]).
pub(crate) const MAX_LONG_BYTES: usize = 1786;

const BILLION: u64 = 1_000_000_000;

/// An int decoded from text or bytes: an `i64`, or the canonical decimal text of a value
/// outside it (`-` sign, no leading zeros).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Int {
    Small(i64),
    Big(String),
}

/// The value of pickle's `LONG1`/`LONG4` payload: two's complement, little-endian (empty
/// is 0).
pub(crate) fn from_le_bytes(bytes: &[u8]) -> Int {
    if bytes.len() <= 8 {
        let negative = bytes.last().is_some_and(|&b| b & 0x80 != 0);
        let mut buf = if negative { [0xff; 8] } else { [0; 8] };
        buf[..bytes.len()].copy_from_slice(bytes);
        return Int::Small(i64::from_le_bytes(buf));
    }
    let negative = bytes.last().is_some_and(|&b| b & 0x80 != 0);
    let mut magnitude = bytes.to_vec();
    if negative {
        // -x = !x + 1 in two's complement.
        let mut carry = true;
        for b in &mut magnitude {
            let (v, c) = (!*b).overflowing_add(u8::from(carry));
            *b = v;
            carry = c;
        }
    }
    let mut limbs: Vec<u32> =
        magnitude.chunks(4).map(|c| c.iter().rev().fold(0u32, |acc, &b| (acc << 8) | u32::from(b))).collect();
    while limbs.last() == Some(&0) {
        limbs.pop();
    }
    if let Some(v) = fits_i64(&limbs, negative) {
        return Int::Small(v);
    }
    Int::Big(limbs_to_decimal(limbs, negative))
}

/// The `i64` of a magnitude (little-endian `u32` limbs, no zero top limb) and a sign, if
/// it fits.
fn fits_i64(limbs: &[u32], negative: bool) -> Option<i64> {
    if limbs.len() > 2 {
        return None;
    }
    let m = limbs.iter().rev().fold(0u64, |acc, &l| (acc << 32) | u64::from(l));
    if negative {
        0i64.checked_sub_unsigned(m)
    } else {
        i64::try_from(m).ok()
    }
}

/// Decimal text of a magnitude in little-endian `u32` limbs, with a `-` when `negative`.
fn limbs_to_decimal(mut limbs: Vec<u32>, negative: bool) -> String {
    // Repeated division by 10^9 gives base-10^9 digits, least significant first.
    let mut chunks = Vec::new();
    while !limbs.is_empty() {
        let mut rem = 0u64;
        for limb in limbs.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / BILLION) as u32;
            rem = cur % BILLION;
        }
        chunks.push(rem as u32);
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
    let mut out = String::with_capacity(chunks.len() * 9 + 1);
    if negative {
        out.push('-');
    }
    match chunks.split_last() {
        Some((top, rest)) => {
            out.push_str(&top.to_string());
            for c in rest.iter().rev() {
                out.push_str(&format!("{c:09}"));
            }
        }
        None => out.push('0'),
    }
    out
}

/// Parses decimal text (an optional sign, then ASCII digits) as Python's `int()` reads a
/// pickle's `INT`/`LONG` argument.
///
/// # Errors
/// A reason when the text is not a decimal integer or has more than [`MAX_INT_DIGITS`]
/// digits.
pub(crate) fn parse_decimal(text: &str) -> Result<Int, String> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("expected a decimal integer".to_string());
    }
    let digits = digits.trim_start_matches('0');
    if digits.len() > MAX_INT_DIGITS {
        return Err(format!("an int of more than {MAX_INT_DIGITS} digits (Python's own limit)"));
    }
    if digits.is_empty() {
        return Ok(Int::Small(0));
    }
    if digits.len() <= 18 {
        let m: i64 = digits.parse().map_err(|_| "expected a decimal integer".to_string())?;
        return Ok(Int::Small(if negative { -m } else { m }));
    }
    let limbs = decimal_to_limbs(digits);
    Ok(match fits_i64(&limbs, negative) {
        Some(v) => Int::Small(v),
        None => Int::Big(format!("{}{digits}", if negative { "-" } else { "" })),
    })
}

/// The magnitude of a string of ASCII digits as little-endian `u32` limbs (no zero top
/// limb).
fn decimal_to_limbs(digits: &str) -> Vec<u32> {
    let mut limbs: Vec<u32> = Vec::new();
    let head = digits.len() % 9;
    let mut pieces = Vec::new();
    if head > 0 {
        pieces.push(&digits[..head]);
    }
    pieces.extend((head..digits.len()).step_by(9).map(|i| &digits[i..i + 9]));
    for piece in pieces {
        let scale = 10u64.pow(piece.len() as u32);
        let mut carry: u64 = piece.parse().unwrap_or(0);
        for limb in &mut limbs {
            let cur = u64::from(*limb) * scale + carry;
            *limb = cur as u32;
            carry = cur >> 32;
        }
        while carry > 0 {
            limbs.push(carry as u32);
            carry >>= 32;
        }
    }
    while limbs.last() == Some(&0) {
        limbs.pop();
    }
    limbs
}

/// The payload Python's pickler writes for an int (`pickle.encode_long`): the fewest
/// two's-complement little-endian bytes that hold it.
///
/// # Errors
/// A reason when `text` is not decimal text of an int (an optional `-` or `+`, digits).
pub(crate) fn to_le_bytes(text: &str) -> Result<Vec<u8>, String> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{text:?} is not the decimal text of an int"));
    }
    let digits = digits.trim_start_matches('0');
    if digits.len() > MAX_INT_DIGITS {
        return Err(format!("an int of more than {MAX_INT_DIGITS} digits (Python's own limit)"));
    }
    let limbs = decimal_to_limbs(digits);
    let mut magnitude: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
    while magnitude.last() == Some(&0) {
        magnitude.pop();
    }
    let bits = match magnitude.last() {
        Some(&top) => (magnitude.len() - 1) * 8 + (8 - top.leading_zeros() as usize),
        None => 0,
    };
    if bits == 0 {
        return Ok(Vec::new());
    }
    // `nbytes = (x.bit_length() >> 3) + 1`, then a redundant 0xff of a negative dropped.
    let n = (bits >> 3) + 1;
    magnitude.resize(n, 0);
    if negative {
        let mut carry = true;
        for b in &mut magnitude {
            let (v, c) = (!*b).overflowing_add(u8::from(carry));
            *b = v;
            carry = c;
        }
        if n > 1 && magnitude[n - 1] == 0xff && magnitude[n - 2] & 0x80 != 0 {
            magnitude.pop();
        }
    }
    Ok(magnitude)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_text_agree_with_python() {
        // (value, pickle.encode_long(value).hex()) printed by Python 3.11.
        for (text, hex) in [
            ("9223372036854775808", "000000000000008000"),
            ("-18446744073709551617", "fffffffffffffffffe"),
            ("-9223372036854775809", "ffffffffffffff7fff"),
            ("1180591620717411303424", "000000000000000040"),
            ("-123456789012345678901234567890", "2ef5c0b1111f8c3c09f01671fe"),
            ("340282366920938463463374607431768211456", "0000000000000000000000000000000001"),
        ] {
            let want: Vec<u8> =
                { (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect() };
            assert_eq!(to_le_bytes(text).unwrap(), want, "{text}");
            assert_eq!(from_le_bytes(&want), Int::Big(text.to_string()), "{text}");
            assert_eq!(parse_decimal(text).unwrap(), Int::Big(text.to_string()), "{text}");
        }
    }

    #[test]
    fn small_values_stay_i64() {
        for v in [0i64, 1, -1, 255, -256, i64::MAX, i64::MIN, 1 << 40] {
            let bytes = to_le_bytes(&v.to_string()).unwrap();
            assert_eq!(from_le_bytes(&bytes), Int::Small(v), "{v}");
            assert_eq!(parse_decimal(&v.to_string()).unwrap(), Int::Small(v));
        }
        // Longer encodings of small values (valid, if not minimal) still give i64s.
        assert_eq!(from_le_bytes(&[5, 0, 0, 0, 0, 0, 0, 0, 0, 0]), Int::Small(5));
        assert_eq!(from_le_bytes(&[0xff; 12]), Int::Small(-1));
        assert_eq!(from_le_bytes(&[]), Int::Small(0));
        assert_eq!(parse_decimal("-0000").unwrap(), Int::Small(0));
        assert_eq!(parse_decimal("+0012").unwrap(), Int::Small(12));
        assert_eq!(to_le_bytes("0").unwrap(), Vec::<u8>::new());
        assert_eq!(to_le_bytes("-128").unwrap(), [0x80]);
        assert_eq!(to_le_bytes("128").unwrap(), [0x80, 0]);
    }

    #[test]
    fn bad_text_is_refused() {
        for bad in ["", "-", "1.5", "0x10", "1_000", " 1", "١"] {
            assert!(parse_decimal(bad).is_err(), "{bad:?}");
            assert!(to_le_bytes(bad).is_err(), "{bad:?}");
        }
        let long = "9".repeat(MAX_INT_DIGITS + 1);
        assert!(parse_decimal(&long).is_err());
        assert!(parse_decimal(&"9".repeat(MAX_INT_DIGITS)).is_ok());
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn longest_payloads_are_near_pythons_digit_limit() {
        // 1785 bytes always print within 4300 digits; 1786 bytes may not (the decoder
        // checks the text it gets).
        let Int::Big(text) = from_le_bytes(&[0x7f; MAX_LONG_BYTES - 1]) else { panic!("not big") };
        assert!(text.len() <= MAX_INT_DIGITS, "{}", text.len());
        assert_eq!(to_le_bytes(&text).unwrap(), [0x7f; MAX_LONG_BYTES - 1]);
        let Int::Big(text) = from_le_bytes(&[0x7f; MAX_LONG_BYTES]) else { panic!("not big") };
        assert!(text.len() > MAX_INT_DIGITS, "{}", text.len());
    }
}
