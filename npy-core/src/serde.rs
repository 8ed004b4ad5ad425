//! The serde bridge (feature `serde`): records of any array read into any
//! `T: Deserialize` by field name, any `T: Serialize` written as a record array, and a
//! dynamic [`Value`] for files of unknown type.
//!
//! `#[derive(NpyRecord)]` is the fast path: records are copied in bulk into the struct's
//! memory. Not every type can derive it: types from other crates, configs, ad-hoc analysis.
//! Those go through serde here, one record at a time, by field name: field order and
//! extra fields in the file do not matter, and serde's attributes (`rename`, `default`,
//! `flatten`, `deny_unknown_fields`, ...) work as usual.
//!
//! | task | API |
//! |---|---|
//! | all records into `Vec<T>` | [`from_npy_reader`], [`from_path`], [`from_dyn`] |
//! | records one by one, read in chunks | [`iter`] |
//! | one element's bytes | [`from_element`] |
//! | write records | [`to_writer`], [`to_path`], [`to_dyn`] (dtype given or traced) |
//! | the dtype values would be written with | [`trace_dtype`] |
//! | any file, type unknown | [`Value::decode`], [`Value::from_dyn`], [`values`] |
//!
//! # Reading: how a dtype looks to serde
//! Each element is deserialized from the file's own dtype and bytes (byte order converted
//! per scalar), in storage order (Fortran order for Fortran files, as
//! [`NpyReader::read`](crate::NpyReader::read)):
//!
//! | dtype | serde data model | reads into |
//! |---|---|---|
//! | record | map of field name → value, in offset order (also a sequence of field values, for tuples) | structs, maps, tuples of as many fields |
//! | subarray `(n, m)` | sequence of `n` sequences of `m` | `Vec`, `[T; n]`, tuples (lengths checked) |
//! | `b1` | bool; bytes other than 0 and 1 are an error | `bool` |
//! | `i1`–`i8`, `u1`–`u8` | `i8`–`i64`, `u8`–`u64` | any integer type the value fits, floats |
//! | `f2`, `f4` / `f8` | `f32` / `f64` | `f32`, `f64` |
//! | `c8` / `c16` | tuple `(re, im)` of `f32` / `f64` | `(f64, f64)`, `[f32; 2]` |
//! | `M8[unit]`, `m8[unit]` | `i64` count of units (NaT is `i64::MIN`) | `i64` |
//! | `S n` | bytes, trailing NULs stripped (as NumPy shows them); a str when asked for one and UTF-8; a sequence of `u8` when asked for one (all `n` bytes for `[u8; n]`) | `String`, `Vec<u8>`, `[u8; n]`, `serde_bytes` |
//! | `U n` | string, trailing NULs stripped; invalid code points are an error | `String`, `char` (for one char) |
//! | `V n` | the `n` raw bytes | `Vec<u8>`, `[u8; n]` |
//! | `f16`, `c32` (long double) | the 16 or 32 raw bytes, each 16-byte long double little-endian | `Vec<u8>` |
//!
//! `Option<T>` reads as `Some`; a field missing from the file is `None`, as serde does.
//! Enums read unit variants from strings (by name) or integers (by index).
//!
//! # Writing
//! With a dtype, each record is serialized, then placed into the dtype by field name:
//! a field the dtype lacks, or a dtype field the value lacks, is an error naming it.
//! Values go into any field that can hold them, range-checked: integers into any integer
//! field they fit, integers and floats into float fields (rounded to `f4`/`f2`, NaN
//! payloads kept as far as they fit), numbers or `(re, im)` pairs into
//! complex fields, strings into `U` and `S` (as UTF-8), bytes or sequences of `u8` into
//! `S` and `V`, integers into `M8`/`m8`, sequences into subarrays of their length,
//! sequences of as many values as fields into records (positionally). Padding is zeros.
//!
//! Without a dtype, it is traced from the values first ([`trace_dtype`]):
//!
//! | serde value | dtype |
//! |---|---|
//! | `bool` | `\|b1` |
//! | `i8`–`i64` (and `i128` that fits) | `<i8` |
//! | `u8`–`u64` (and `u128` that fits) | `<u8` |
//! | `f32`, `f64` | `<f8` |
//! | `char`, `str` | `<U{n}`, `n` the most chars of any record (at least 1) |
//! | bytes (`serde_bytes`, [`Value::Bytes`]; a `Vec<u8>` is a sequence) | `\|S{n}`, `n` the longest (at least 1) |
//! | struct, map with string keys | a packed record, fields in serialization order |
//! | sequence, tuple, array | a subarray `(len,)` of its elements' dtype, nested sequences `(len, len2, ...)`; every record must give the same lengths; an empty sequence is `(0,)` of `<f8` |
//! | newtype struct, `Some(v)` | as `v` |
//! | unit enum variant | its name, as a string |
//! | `None`, `()`, unit structs, variants with data | an error: NumPy has no such value |
//!
//! Records must agree: a field is a signed integer in all of them (`<i8`, also when some
//! give unsigned values), or a number (`<f8` as soon as one is a float), or a string, and
//! so on; records of structs must have the same fields. Byte order is little-endian.
//! Records that are not structs give a plain array (`&[f64]` → `<f8`), and records that
//! are sequences give a 2-D (or N-d) array of their elements (`&[[f32; 3]]` → shape
//! `(n, 3)`).
//!
//! # Errors
//! Problems with data values (a `b1` byte other than 0/1, an invalid code point) are
//! [`ErrorKind::InvalidValue`](crate::ErrorKind::InvalidValue); a type or value that does not fit
//! the dtype is [`ErrorKind::Serde`](crate::ErrorKind::Serde). Both name the element (storage
//! index) and the field path, e.g.
//! `serde: element 0, field 'samples': invalid length 64, expected a tuple of 3`.
//!
//! # Examples
//! A struct from another crate's world, written with a traced dtype and read back by name:
//! ```
//! use npy_core::NpyReader;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Pick {
//!     station: String,
//!     time: f64,
//!     weight: u8,
//! }
//!
//! let picks = vec![
//!     Pick { station: "ANMO".into(), time: 12.5, weight: 3 },
//!     Pick { station: "HRV".into(), time: 13.25, weight: 1 },
//! ];
//! let file = npy_core::serde::to_writer(&picks, None, Vec::new())?;
//! let reader = NpyReader::from_reader(&file[..])?;
//! assert_eq!(reader.header().dtype.descr(), "[('station', '<U4'), ('time', '<f8'), ('weight', '<u8')]");
//! let back: Vec<Pick> = npy_core::serde::from_npy_reader(reader)?;
//! assert_eq!(back, picks);
//! # Ok::<(), npy_core::Error>(())
//! ```

// The parts. Reading: `de` (the `Deserializer`) and `value` (`Value` and its decoder), driven
// by `read` (the read API). Writing: `ser` (any `Serialize` value into a `Value`), `trace` (the
// dtype of values) and `encode` (a `Value` into a dtype's bytes), driven by `write` (the write
// API). Shared: `tree` (an element's dtype levels, strides, zero-size budget and scalar leaves,
// walked by `de`, `value` and `encode`) and `error` (the error type all of them return).
mod de;
mod encode;
mod error;
mod read;
mod ser;
mod trace;
mod tree;
mod value;
mod write;

pub use read::{from_dyn, from_element, from_npy_reader, from_path, iter, values, Iter, Values};
pub use ser::to_value;
pub use trace::trace_dtype;
pub use value::Value;
pub use write::{to_dyn, to_path, to_writer};

/// A dtype from its descr text, for the tests of the serde modules.
#[cfg(test)]
fn dt(s: &str) -> crate::dtype::DType {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}
