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
//! | all records into `Vec<T>` | [`from_reader`], [`from_path`], [`from_dyn`] |
//! | records one by one, read in chunks | [`iter`] |
//! | one element's bytes | [`from_element`] |
//! | write records | [`to_writer`], [`to_path`], [`to_dyn`] (dtype given or traced) |
//! | the dtype values would be written with | [`trace_dtype`] |
//! | any file, type unknown | [`Value::decode`], [`Value::from_dyn`], [`values`] |
//!
//! # Reading: how a dtype looks to serde
//! Each element is deserialized from the file's own dtype and bytes (byte order converted
//! per scalar), in storage order (Fortran order for Fortran files, as
//! [`NpyReader::read_vec`](crate::NpyReader::read_vec)):
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
//! let reader = NpyReader::new(&file[..])?;
//! assert_eq!(reader.header().dtype.descr(), "[('station', '<U4'), ('time', '<f8'), ('weight', '<u8')]");
//! let back: Vec<Pick> = npy_core::serde::from_reader(reader)?;
//! assert_eq!(back, picks);
//! # Ok::<(), npy_core::Error>(())
//! ```

mod de;
mod error;
mod read;
mod ser;
mod trace;
mod tree;
mod value;

pub use read::{from_dyn, from_element, from_path, from_reader, iter, values, Iter, Values};
pub use ser::to_value;
pub use trace::trace_dtype;
pub use value::Value;

use std::io::{BufWriter, Write};
use std::path::Path;

use ::serde::ser::Serialize;

use crate::array::DynArray;
use crate::dtype::{DType, Record, Scalar, ScalarType};
use crate::error::Result;
use crate::header::Header;
use crate::scalar::{self, ScalarError, Value as Prim};

use error::{BResult, BridgeError};
use read::{default_chunk, CHUNK_BYTES};
use ser::ValueSer;
use tree::{node, stride, Node};

// ---------------------------------------------------------------------------------------
// Encoding values into a dtype's bytes.

fn expected(what: &str, v: &Value) -> BridgeError {
    BridgeError::mismatch(format!("expected {what}, found {}", v.kind()))
}

fn encode(v: &Value, dtype: &DType, dims: &[usize], out: &mut [u8]) -> BResult<()> {
    match node(dtype, dims) {
        Node::Array { dtype, dims } => {
            let (n, stride) = (dims[0], stride(dtype, dims));
            let items = match v {
                Value::Array(items) if items.len() == n => items,
                Value::Array(items) => {
                    return Err(BridgeError::mismatch(format!(
                        "a sequence of {} items for a subarray of {n}",
                        items.len()
                    )))
                }
                other => return Err(expected(&format!("a sequence of {n} items"), other)),
            };
            for (i, item) in items.iter().enumerate() {
                encode(item, dtype, &dims[1..], &mut out[i * stride..(i + 1) * stride]).map_err(|e| e.index(i))?;
            }
            Ok(())
        }
        Node::Record(r) => encode_record(v, r, out),
        Node::Scalar(s) => encode_scalar(v, s, out),
    }
}

fn encode_record(v: &Value, r: &Record, out: &mut [u8]) -> BResult<()> {
    let fields = r.fields();
    let put = |f: &crate::dtype::Field, item: &Value, out: &mut [u8]| {
        encode(item, &f.dtype, &[], &mut out[f.offset..f.offset + f.dtype.itemsize()]).map_err(|e| e.field(&f.name))
    };
    match v {
        Value::Record(entries) => {
            let mut set = vec![false; fields.len()];
            for (j, (name, item)) in entries.iter().enumerate() {
                // Values usually come in the dtype's order: try the same position first.
                let k = match fields.get(j) {
                    Some(f) if f.name == *name => Some(j),
                    _ => fields.iter().position(|f| f.name == *name),
                };
                let Some(k) = k else {
                    return Err(BridgeError::mismatch(format!("the dtype has no field '{name}'")));
                };
                if std::mem::replace(&mut set[k], true) {
                    return Err(BridgeError::mismatch(format!("field '{name}' is given twice")));
                }
                put(&fields[k], item, out)?;
            }
            match set.iter().position(|s| !s) {
                Some(k) => Err(BridgeError::mismatch(format!("missing field '{}'", fields[k].name))),
                None => Ok(()),
            }
        }
        Value::Array(items) if items.len() == fields.len() => {
            items.iter().zip(fields).try_for_each(|(item, f)| put(f, item, out))
        }
        other => Err(expected(&format!("a struct or map for a record of {} fields", fields.len()), other)),
    }
}

/// Bytes `v` stands for: bytes, a string's UTF-8, or a sequence of integers 0–255.
fn bytes_of(v: &Value) -> Option<std::borrow::Cow<'_, [u8]>> {
    match v {
        Value::Bytes(b) | Value::Void(b) | Value::LongDouble(b) | Value::LongComplex(b) => Some(b.into()),
        Value::Str(s) => Some(s.as_bytes().into()),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Int(x) => u8::try_from(*x).ok(),
                Value::UInt(x) => u8::try_from(*x).ok(),
                _ => None,
            })
            .collect::<Option<Vec<u8>>>()
            .map(Into::into),
        _ => None,
    }
}

fn float_of(v: &Value) -> Option<f64> {
    match *v {
        Value::Float(x) => Some(x),
        Value::Int(x) => Some(x as f64),
        Value::UInt(x) => Some(x as f64),
        _ => None,
    }
}

/// An integer value (signed or unsigned) as `i128`.
fn int_of(v: &Value) -> Option<i128> {
    match *v {
        Value::Int(x) => Some(x.into()),
        Value::UInt(x) => Some(x.into()),
        _ => None,
    }
}

/// `v` as a value of `s`'s kind (range-checked by the scalar codec), then encoded by it.
fn encode_scalar(v: &Value, s: &Scalar, out: &mut [u8]) -> BResult<()> {
    let ty = s.type_str();
    let codec = |e: ScalarError| BridgeError::mismatch(e.to_string());
    let bytes;
    let value = match s.ty() {
        ScalarType::Bool => match v {
            Value::Bool(b) => Prim::Bool(*b),
            other => return Err(expected("a bool", other)),
        },
        ScalarType::Int(_) | ScalarType::UInt(_) => {
            Prim::from_int(int_of(v).ok_or_else(|| expected("an integer", v))?, *s).map_err(codec)?
        }
        ScalarType::Float(2 | 4 | 8) => {
            Prim::from_f64(float_of(v).ok_or_else(|| expected("a number", v))?, *s).map_err(codec)?
        }
        ScalarType::Complex(8 | 16) => {
            let (re, im) = match v {
                Value::Complex(re, im) => (*re, *im),
                Value::Array(parts) if parts.len() == 2 => match (float_of(&parts[0]), float_of(&parts[1])) {
                    (Some(re), Some(im)) => (re, im),
                    _ => return Err(expected("a number or an (re, im) pair", v)),
                },
                other => (float_of(other).ok_or_else(|| expected("a number or an (re, im) pair", other))?, 0.0),
            };
            Prim::from_complex(re, im, *s).map_err(codec)?
        }
        ScalarType::Float(16) | ScalarType::Complex(32) => {
            let b = bytes_of(v).filter(|b| b.len() == s.itemsize());
            let b = b.ok_or_else(|| expected(&format!("{} bytes for {ty}", s.itemsize()), v))?;
            match (<[u8; 16]>::try_from(&b[..]), <[u8; 32]>::try_from(&b[..])) {
                (Ok(ld), _) => Prim::LongDouble(ld),
                (_, Ok(lc)) => Prim::LongComplex(lc),
                _ => return Err(expected(&format!("{} bytes for {ty}", s.itemsize()), v)),
            }
        }
        ScalarType::DateTime(unit) | ScalarType::TimeDelta(unit) => {
            let x = match *v {
                Value::DateTime { value, unit: u } | Value::TimeDelta { value, unit: u } if u == unit => value.into(),
                ref other => int_of(other).ok_or_else(|| expected(&format!("an integer count of {ty}"), other))?,
            };
            Prim::from_int(x, *s).map_err(codec)?
        }
        ScalarType::Bytes(_) => {
            bytes = bytes_of(v).ok_or_else(|| expected("bytes or a string", v))?;
            Prim::Bytes(&bytes)
        }
        ScalarType::Unicode(_) => match v {
            Value::Str(text) => Prim::Str(text.as_str().into()),
            other => return Err(expected("a string", other)),
        },
        ScalarType::Void(n) => {
            bytes = bytes_of(v).filter(|b| b.len() == n).ok_or_else(|| expected(&format!("{n} bytes for {ty}"), v))?;
            Prim::Void(&bytes)
        }
        ScalarType::Float(_) | ScalarType::Complex(_) | ScalarType::Object => {
            return Err(BridgeError::mismatch(format!("unsupported scalar type {ty}")));
        }
    };
    scalar::encode(&value, *s, out).map_err(codec)
}

// ---------------------------------------------------------------------------------------
// Writing: public API.

/// The header for `n` records of `dtype` (a subarray dtype adds its shape to the array's)
/// and the dtype to encode each record with.
fn prepare<T: Serialize>(records: &[T], dtype: Option<&DType>) -> Result<(Header, DType)> {
    let dtype = match dtype {
        Some(d) => d.clone(),
        None => trace_dtype(records)?,
    };
    let mut shape = vec![records.len()];
    let base = match &dtype {
        DType::SubArray(a) => {
            shape.extend(a.flat_shape());
            a.flat_base().clone()
        }
        other => other.clone(),
    };
    let header = Header::new(base, shape);
    header.data_len()?;
    Ok((header, dtype))
}

/// Serializes each record into its bytes and writes them, a chunk at a time.
fn write_data<T: Serialize, W: Write + ?Sized>(records: &[T], dtype: &DType, writer: &mut W) -> Result<()> {
    let size = dtype.itemsize();
    let per = default_chunk(size);
    let mut buf = vec![0u8; per.min(records.len()) * size];
    for (c, chunk) in records.chunks(per).enumerate() {
        let bytes = &mut buf[..chunk.len() * size];
        bytes.fill(0);
        for (k, record) in chunk.iter().enumerate() {
            let out = &mut bytes[k * size..(k + 1) * size];
            record
                .serialize(ValueSer)
                .and_then(|v| encode(&v, dtype, &[], out))
                .map_err(|e| e.into_error(Some(c * per + k)))?;
        }
        writer.write_all(bytes)?;
    }
    Ok(())
}

/// Writes `records` as a `.npy` array of shape `(records.len(),)` to `writer` and returns
/// it. The dtype is `dtype` when given (fields matched by name, padding zeroed), else
/// traced from the records ([`trace_dtype`]); a subarray dtype adds its shape to the
/// array's (records of `[f32; 3]` give shape `(n, 3)`). The header is `np.save`'s.
///
/// Records are serialized and written a chunk at a time, so on an error the writer may
/// hold part of the array; [`to_path`] never leaves such a file.
///
/// # Errors
/// [`ErrorKind::Serde`](crate::ErrorKind::Serde) for a record that does not fit the dtype (a
/// missing or extra field, a value out of range, a string too long), naming the element and field;
/// as [`trace_dtype`] without a dtype; [`ErrorKind::Io`](crate::ErrorKind::Io) from the writer.
///
/// # Examples
/// Writing into a dtype NumPy's side asked for, by field name:
/// ```
/// use npy_core::{DType, DynArray, prelude::*};
///
/// #[derive(serde::Serialize)]
/// struct Event {
///     mag: f64,
///     id: u32,
///     label: &'static str,
/// }
///
/// let dtype: DType = "[('id', '>u4'), ('', '|V4'), ('mag', '<f4'), ('label', '|S8')]".parse()?;
/// let file = npy_core::serde::to_writer(&[Event { mag: 4.5, id: 9, label: "quake" }], Some(&dtype), Vec::new())?;
/// let arr = DynArray::read_npy_from(&file[..])?;
/// assert_eq!(arr.dtype(), &dtype);
/// assert_eq!(&arr.data()[..4], &9u32.to_be_bytes());
/// assert_eq!(&arr.data()[4..8], &[0; 4]);
/// assert_eq!(&arr.data()[12..], b"quake\0\0\0");
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn to_writer<T: Serialize, W: Write>(records: &[T], dtype: Option<&DType>, mut writer: W) -> Result<W> {
    let (header, dtype) = prepare(records, dtype)?;
    writer.write_all(&header.encode(None)?.1)?;
    write_data(records, &dtype, &mut writer)?;
    Ok(writer)
}

/// Writes `records` as a `.npy` file, atomically (a temporary file renamed over `path`
/// when complete, synced first, as [`WriteNpy::write_npy`](crate::WriteNpy::write_npy)):
/// see [`to_writer`] for the dtype.
///
/// # Errors
/// As [`to_writer`]; on any error the file at `path` is untouched.
///
/// # Examples
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("pairs.npy");
/// // Tuples have no field names: traced, they are a 2-D array of their common type.
/// npy_core::serde::to_path(&[(1u8, 2.5f64), (3, 4.5)], None, &path)?;
/// assert_eq!(npy_core::ReadOptions::new().open_path(&path)?.header().shape, [2, 2]);
/// let back: Vec<f64> = npy_core::serde::from_path(&path)?;
/// assert_eq!(back, [1.0, 2.5, 3.0, 4.5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_path<T: Serialize>(records: &[T], dtype: Option<&DType>, path: impl AsRef<Path>) -> Result<()> {
    let (header, dtype) = prepare(records, dtype)?;
    let head = header.encode(None)?.1;
    crate::write::to_path(path.as_ref(), &head, true, |file| {
        let mut w = BufWriter::with_capacity(CHUNK_BYTES, file);
        write_data(records, &dtype, &mut w)?;
        w.flush()?;
        Ok(())
    })
}

/// Builds a [`DynArray`] of `records` in memory: see [`to_writer`] for the dtype. Reshape
/// it with [`DynArray::new`] and a header of another shape.
///
/// # Errors
/// As [`to_writer`].
///
/// # Examples
/// ```
/// use npy_core::header::Header;
/// use npy_core::DynArray;
///
/// let arr = npy_core::serde::to_dyn(&[1i32, 2, 3, 4, 5, 6], None)?;
/// assert_eq!(arr.dtype().descr(), "'<i8'");
/// let grid = DynArray::new(Header::new(arr.dtype().clone(), vec![2, 3]), arr.into_data())?;
/// assert_eq!(grid.get::<i64>(&[1, 0])?, 4);
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn to_dyn<T: Serialize>(records: &[T], dtype: Option<&DType>) -> Result<DynArray> {
    let (header, dtype) = prepare(records, dtype)?;
    let mut data = Vec::with_capacity(header.data_len()?);
    write_data(records, &dtype, &mut data)?;
    DynArray::new(header, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> DType {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn encoding_checks_ranges_and_round_trips() {
        let d = dt("[('i', '>i2'), ('u', '|u1'), ('f', '>f2'), ('c', '<c8'), ('s', '|S3'), ('w', '>U2'), ('t', '<M8[D]'), ('v', '|V2')]");
        let rec = Value::Record(vec![
            ("i".into(), Value::Int(-300)),
            ("u".into(), Value::UInt(255)),
            ("f".into(), Value::Float(0.5)),
            ("c".into(), Value::Array(vec![Value::Int(1), Value::Float(-0.25)])),
            ("s".into(), Value::Str("ab".into())),
            ("w".into(), Value::Str("地震".into())),
            ("t".into(), Value::Int(19000)),
            ("v".into(), Value::Bytes(vec![1, 2])),
        ]);
        let mut out = vec![0u8; d.itemsize()];
        encode(&rec, &d, &[], &mut out).unwrap();
        let back = Value::decode(&d, &out).unwrap();
        assert_eq!(back.get("i"), Some(&Value::Int(-300)));
        assert_eq!(back.get("c"), Some(&Value::Complex(1.0, -0.25)));
        assert_eq!(back.get("s"), Some(&Value::Bytes(b"ab".to_vec())));
        assert_eq!(back.get("w"), Some(&Value::Str("地震".into())));
        // Decoded values encode back to the same bytes.
        let mut again = vec![0u8; d.itemsize()];
        encode(&back, &d, &[], &mut again).unwrap();
        assert_eq!(again, out);
        for (field, bad) in [
            ("u", Value::Int(256)),
            ("u", Value::Int(-1)),
            ("i", Value::Float(1.0)),
            ("s", Value::Str("abcd".into())),
            ("w", Value::Str("abc".into())),
            ("v", Value::Bytes(vec![1])),
        ] {
            let mut rec = rec.clone();
            let Value::Record(fields) = &mut rec else { unreachable!() };
            fields.iter_mut().find(|(n, _)| n == field).unwrap().1 = bad;
            let e = encode(&rec, &d, &[], &mut out).unwrap_err();
            assert_eq!(e.path(), field, "{e}");
        }
    }
}
