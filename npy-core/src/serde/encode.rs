//! Encoding values into a dtype's bytes: each field placed by name, each scalar range-checked
//! and encoded by the scalar codec.

use super::error::{BResult, BridgeError};
use super::tree::{node, stride, Node};
use super::value::Value;
use crate::dtype::{DType, Record, Scalar, ScalarType};
use crate::scalar::{self, ScalarError, Value as Prim};

fn expected(what: &str, v: &Value) -> BridgeError {
    BridgeError::mismatch(format!("expected {what}, found {}", v.kind()))
}

pub(super) fn encode(v: &Value, dtype: &DType, dims: &[usize], out: &mut [u8]) -> BResult<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serde::dt;

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
