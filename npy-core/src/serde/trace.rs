//! Tracing a dtype from values: the type each record serializes to, merged over all records
//! as NumPy promotes.

use ::serde::ser::Serialize;

use super::error::{BResult, BridgeError};
use super::ser::ValueSer;
use super::value::Value;
use crate::dtype::{ByteOrder, DType, Record, Scalar, ScalarType};
use crate::error::{Error, Result};

/// The type of a value as tracing sees it.
#[derive(Debug, Clone, PartialEq)]
enum Ty {
    Bool,
    Int,
    UInt,
    Float,
    /// Most chars seen.
    Str(usize),
    /// Most bytes seen.
    Bytes(usize),
    Record(Vec<(String, Ty)>),
    /// Length, and the items' type (`None` while every sequence seen was empty).
    Array(usize, Option<Box<Ty>>),
}

impl Ty {
    fn kind(&self) -> &'static str {
        match self {
            Ty::Bool => "a bool",
            Ty::Int | Ty::UInt | Ty::Float => "a number",
            Ty::Str(_) => "a string",
            Ty::Bytes(_) => "bytes",
            Ty::Record(_) => "a struct",
            Ty::Array(..) => "a sequence",
        }
    }

    fn to_dtype(&self) -> Result<DType> {
        let scalar = |ty, order| Ok(DType::Scalar(Scalar::new(ty, order)));
        match self {
            Ty::Bool => scalar(ScalarType::Bool, ByteOrder::NotApplicable),
            Ty::Int => scalar(ScalarType::Int(8), ByteOrder::Little),
            Ty::UInt => scalar(ScalarType::UInt(8), ByteOrder::Little),
            Ty::Float => scalar(ScalarType::Float(8), ByteOrder::Little),
            Ty::Str(n) => scalar(ScalarType::Unicode((*n).max(1)), ByteOrder::Little),
            Ty::Bytes(n) => scalar(ScalarType::Bytes((*n).max(1)), ByteOrder::NotApplicable),
            Ty::Record(fields) => {
                let fields = fields.iter().map(|(name, ty)| Ok((name.clone(), ty.to_dtype()?)));
                Ok(DType::Record(Record::packed(fields.collect::<Result<Vec<_>>>()?)?))
            }
            Ty::Array(n, item) => {
                let mut dims = vec![*n];
                let mut item = item.as_deref();
                while let Some(Ty::Array(m, inner)) = item {
                    dims.push(*m);
                    item = inner.as_deref();
                }
                let base = match item {
                    Some(ty) => ty.to_dtype()?,
                    None => Ty::Float.to_dtype()?,
                };
                DType::subarray(base, dims)
            }
        }
    }
}

fn trace(v: &Value) -> BResult<Ty> {
    Ok(match v {
        Value::Bool(_) => Ty::Bool,
        Value::Int(_) | Value::DateTime { .. } | Value::TimeDelta { .. } => Ty::Int,
        Value::UInt(_) => Ty::UInt,
        Value::Float(_) => Ty::Float,
        Value::Complex(..) => Ty::Array(2, Some(Box::new(Ty::Float))),
        Value::Str(s) => Ty::Str(s.chars().count()),
        Value::Bytes(b) | Value::Void(b) | Value::LongDouble(b) | Value::LongComplex(b) => Ty::Bytes(b.len()),
        Value::Record(fields) => {
            let mut out: Vec<(String, Ty)> = Vec::with_capacity(fields.len());
            for (name, v) in fields {
                if out.iter().any(|(n, _)| n == name) {
                    return Err(BridgeError::mismatch(format!("field '{name}' is given twice")));
                }
                out.push((name.clone(), trace(v).map_err(|e| e.field(name))?));
            }
            Ty::Record(out)
        }
        Value::Array(items) => {
            let mut item: Option<Ty> = None;
            for (i, v) in items.iter().enumerate() {
                let ty = trace(v).map_err(|e| e.index(i))?;
                item = Some(match item {
                    None => ty,
                    Some(acc) => merge(acc, ty).map_err(|e| e.index(i))?,
                });
            }
            Ty::Array(items.len(), item.map(Box::new))
        }
    })
}

/// The type that holds values of both types, as NumPy promotes (ints and floats to float,
/// strings to the longer).
fn merge(a: Ty, b: Ty) -> BResult<Ty> {
    Ok(match (a, b) {
        (Ty::Bool, Ty::Bool) => Ty::Bool,
        (Ty::Int, Ty::Int) => Ty::Int,
        (Ty::UInt, Ty::UInt) => Ty::UInt,
        (Ty::Int, Ty::UInt) | (Ty::UInt, Ty::Int) => Ty::Int,
        (Ty::Int | Ty::UInt | Ty::Float, Ty::Int | Ty::UInt | Ty::Float) => Ty::Float,
        (Ty::Str(n), Ty::Str(m)) => Ty::Str(n.max(m)),
        (Ty::Bytes(n), Ty::Bytes(m)) => Ty::Bytes(n.max(m)),
        (Ty::Record(fa), Ty::Record(mut fb)) => {
            let mut out = Vec::with_capacity(fa.len());
            for (name, ta) in fa {
                let Some(k) = fb.iter().position(|(n, _)| *n == name) else {
                    return Err(BridgeError::mismatch(format!(
                        "field '{name}' is missing here but not in a record before"
                    )));
                };
                let (_, tb) = fb.swap_remove(k);
                out.push((name.clone(), merge(ta, tb).map_err(|e| e.field(&name))?));
            }
            if let Some((name, _)) = fb.first() {
                return Err(BridgeError::mismatch(format!("field '{name}' is here but in no record before")));
            }
            Ty::Record(out)
        }
        (Ty::Array(n, ia), Ty::Array(m, ib)) => {
            if n != m {
                return Err(BridgeError::mismatch(format!(
                    "sequences of {n} and {m} items cannot share one subarray dtype"
                )));
            }
            let item = match (ia, ib) {
                (Some(x), Some(y)) => Some(Box::new(merge(*x, *y)?)),
                (x, y) => x.or(y),
            };
            Ty::Array(n, item)
        }
        (a, b) => {
            return Err(BridgeError::mismatch(format!("{} and {} cannot share one dtype", a.kind(), b.kind())));
        }
    })
}

/// The dtype [`to_writer`](super::to_writer) writes `records` with when given none (rules in the
/// [module documentation](super)): every record is serialized and their types merged.
///
/// # Errors
/// [`ErrorKind::Usage`](crate::ErrorKind::Usage) for no records (there is nothing to trace);
/// [`ErrorKind::Serde`](crate::ErrorKind::Serde) for values without a NumPy type (as
/// [`to_value`](super::to_value)) and records that disagree (a field that is a number in one and a string in another, sequences of
/// different lengths, structs with different fields), naming the element and field.
///
/// # Examples
/// ```
/// #[derive(serde::Serialize)]
/// struct Station {
///     code: String,
///     pos: [f32; 2],
///     n: i32,
///     raw: Vec<u8>,
/// }
///
/// let rows = [
///     Station { code: "ANMO".into(), pos: [34.9, -106.5], n: 3, raw: vec![1, 2] },
///     Station { code: "KONO".into(), pos: [59.6, 9.6], n: -1, raw: vec![3, 4] },
/// ];
/// let dtype = npy_core::serde::trace_dtype(&rows)?;
/// assert_eq!(
///     dtype.descr(),
///     "[('code', '<U4'), ('pos', '<f8', (2,)), ('n', '<i8'), ('raw', '<u8', (2,))]"
/// );
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn trace_dtype<T: Serialize>(records: &[T]) -> Result<DType> {
    let mut acc: Option<Ty> = None;
    for (i, record) in records.iter().enumerate() {
        let ty = record.serialize(ValueSer).and_then(|v| trace(&v)).map_err(|e| e.into_error(Some(i)))?;
        acc = Some(match acc {
            None => ty,
            Some(a) => merge(a, ty).map_err(|e| e.into_error(Some(i)))?,
        });
    }
    acc.ok_or_else(|| Error::usage("cannot trace a dtype from no records: give the dtype"))?.to_dtype()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traced_dtypes_follow_the_documented_rules() {
        let v = |x: Value| trace(&x).map(|t| t.to_dtype().unwrap().descr()).unwrap();
        assert_eq!(v(Value::Bool(true)), "'|b1'");
        assert_eq!(v(Value::Str(String::new())), "'<U1'");
        assert_eq!(v(Value::Bytes(vec![1, 2, 3])), "'|S3'");
        assert_eq!(v(Value::Array(vec![])), "('<f8', (0,))");
        assert_eq!(v(Value::Array(vec![Value::Array(vec![Value::Int(1), Value::Float(2.0)]); 3])), "('<f8', (3, 2))");
        let merged = merge(Ty::Int, Ty::UInt).unwrap();
        assert_eq!(merged, Ty::Int);
        assert_eq!(merge(Ty::Str(2), Ty::Str(5)).unwrap(), Ty::Str(5));
        assert!(merge(Ty::Str(2), Ty::Int).is_err());
        assert!(merge(Ty::Array(2, None), Ty::Array(3, None)).is_err());
        let a = Ty::Record(vec![("x".into(), Ty::Int), ("y".into(), Ty::Bool)]);
        let b = Ty::Record(vec![("y".into(), Ty::Bool), ("x".into(), Ty::Float)]);
        assert_eq!(merge(a.clone(), b).unwrap(), Ty::Record(vec![("x".into(), Ty::Float), ("y".into(), Ty::Bool)]));
        let e = merge(a, Ty::Record(vec![("x".into(), Ty::Int)])).unwrap_err();
        assert!(e.reason.contains("'y'"), "{e}");
    }
}
